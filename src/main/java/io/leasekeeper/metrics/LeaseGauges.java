package io.leasekeeper.metrics;

import io.leasekeeper.lease.ActiveCounts;
import io.leasekeeper.lease.LeaseOperations;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * Gauges of the lease table, read from the database on a schedule ({@code leasekeeper.metrics.gauge-refresh},
 * 10 s) and served from memory, so a scrape never queries the database. Every instance reads the same
 * table: dashboards take {@code max}, not {@code sum}, across instances.
 */
@Component
public class LeaseGauges {

    private static final Logger log = LoggerFactory.getLogger(LeaseGauges.class);

    private final LeaseOperations operations;
    private final AtomicReference<ActiveCounts> last = new AtomicReference<>(new ActiveCounts(0, 0, 0));

    LeaseGauges(LeaseOperations operations, MeterRegistry registry) {
        this.operations = operations;
        Gauge.builder("leasekeeper.leases.active", last, c -> c.get().active())
                .description("Leases active and within their TTL").register(registry);
        Gauge.builder("leasekeeper.leases.unswept", last, c -> c.get().unswept())
                .description("Leases past their TTL that the sweeper has not yet marked expired").register(registry);
        Gauge.builder("leasekeeper.sweeper.lag", last, c -> c.get().lagSeconds()).baseUnit("seconds")
                .description("How long ago the oldest lease still marked active expired (0 when none)")
                .register(registry);
    }

    @Scheduled(fixedDelayString = "${leasekeeper.metrics.gauge-refresh:10s}", initialDelayString = "0s")
    public void refresh() {
        try {
            last.set(operations.activeCounts());
        } catch (RuntimeException e) {
            // The last values stay; the database-unavailable alert speaks for the outage.
            log.warn("Lease gauges not refreshed: {}", e.toString());
        }
    }
}
