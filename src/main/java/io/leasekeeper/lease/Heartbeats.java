package io.leasekeeper.lease;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.stereotype.Component;

/**
 * Heartbeat anomalies (contract 1.1, "Tenant limits"): measured, never refused. Each successful renew brings the
 * fraction of the lease's TTL that had passed since its previous renew or its grant. Under a tenth, the holder
 * renews far more often than it needs to (load for nothing); over nine tenths, it renewed dangerously late (a
 * pause or a slow network a little longer and the lease would have expired under it). Both are counted by kind;
 * alert rules in helm/leasekeeper/files/leasekeeper-alerts.yml fire on them.
 */
@Component
class Heartbeats {

    static final double EARLY = 0.1;
    static final double LATE = 0.9;

    private final Counter early;
    private final Counter late;

    Heartbeats(MeterRegistry registry) {
        this.early = counter(registry, "early");
        this.late = counter(registry, "late");
    }

    void record(double beat) {
        if (beat < EARLY) {
            early.increment();
        } else if (beat > LATE) {
            late.increment();
        }
    }

    private static Counter counter(MeterRegistry registry, String kind) {
        return Counter.builder("leasekeeper.heartbeat.anomalies")
                .description("Renewals far sooner (under a tenth of the TTL since the previous renew or the grant)"
                        + " or later (over nine tenths) than needed")
                .tag("kind", kind).register(registry);
    }
}
