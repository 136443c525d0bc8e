package io.leasekeeper.limits;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/** The meter of the limits' refusals, one series per limit (never per tenant: tenants are unbounded). */
final class TenantLimits {

    private TenantLimits() {
    }

    static Counter refusals(MeterRegistry registry, String limit) {
        return Counter.builder("leasekeeper.limits.refused")
                .description("Requests refused by a tenant limit (429), by limit")
                .tag("limit", limit).register(registry);
    }
}
