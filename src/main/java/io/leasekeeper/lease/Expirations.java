package io.leasekeeper.lease;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/** {@code leasekeeper_expirations_total{cause}}: leases recorded as expired, by who recorded it. */
public final class Expirations {

    private Expirations() {
    }

    /** {@code cause}: {@code sweeper}, or {@code acquire} when an acquire found the key's lease past its TTL. */
    public static Counter counter(MeterRegistry registry, String cause) {
        return Counter.builder("leasekeeper.expirations").description("Leases recorded as expired, by cause")
                .tag("cause", cause).register(registry);
    }

    /** Counts only what commits: a rolled-back expiry never happened. */
    static void afterCommit(Counter counter, int amount) {
        TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
            @Override
            public void afterCommit() {
                counter.increment(amount);
            }
        });
    }
}
