package io.leasekeeper.lease;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/** {@code leasekeeper_expirations_total{cause}}: leases recorded as expired, by who recorded it. */
public final class Expirations {

    private Expirations() {
    }

    /** {@code cause}: {@code sweeper}, or {@code acquire} when an acquire found the key's lease past its TTL. */
    public static Counter counter(MeterRegistry registry, String cause) {
        return Counter.builder("leasekeeper.expirations").description("Leases recorded as expired, by cause")
                .tag("cause", cause).register(registry);
    }
}
