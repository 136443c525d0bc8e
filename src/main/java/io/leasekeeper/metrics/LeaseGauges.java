package io.leasekeeper.metrics;

import io.leasekeeper.lease.ActiveCounts;
import io.leasekeeper.lease.LeaseOperations;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * Gauges of the lease table, read from the database every {@code leasekeeper.metrics.gauge-refresh}
 * (10 s; jobs.PeriodicJobs) and served from memory, so a scrape never queries the database. Every instance reads the same
 * table: dashboards take {@code max}, not {@code sum}, across instances. Whether the last read reached
 * the database is a gauge too: it reports an outage even when no client is calling.
 */
@Component
public class LeaseGauges {

    private static final Logger log = LoggerFactory.getLogger(LeaseGauges.class);

    private final LeaseOperations operations;
    private final AtomicReference<ActiveCounts> last = new AtomicReference<>(new ActiveCounts(0, 0, 0));
    /** NaN until the first read: neither up nor down. */
    private volatile double databaseUp = Double.NaN;

    LeaseGauges(LeaseOperations operations, MeterRegistry registry) {
        this.operations = operations;
        Gauge.builder("leasekeeper.leases.active", last, c -> c.get().active())
                .description("Leases active and within their TTL").register(registry);
        Gauge.builder("leasekeeper.leases.unswept", last, c -> c.get().unswept())
                .description("Leases past their TTL that the sweeper has not yet marked expired").register(registry);
        Gauge.builder("leasekeeper.sweeper.lag", last, c -> c.get().lagSeconds()).baseUnit("seconds")
                .description("How long ago the oldest lease still marked active expired (0 when none)")
                .register(registry);
        Gauge.builder("leasekeeper.database.up", this, g -> g.databaseUp)
                .description("1 when the last gauge refresh read the database, 0 when it failed")
                .register(registry);
    }

    public void refresh() {
        try {
            last.set(operations.activeCounts());
            databaseUp = 1;
        } catch (RuntimeException e) {
            // The last counts stay; the database-up gauge and its alert speak for the outage.
            databaseUp = 0;
            log.warn("Lease gauges not refreshed: {}", e.toString());
        }
    }
}
