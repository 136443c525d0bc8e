package io.leasekeeper.limits;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.time.Duration;
import java.util.concurrent.Semaphore;

/**
 * A fair semaphore of {@code permits} per tenant, made on first use; tenants idle for ten minutes are forgotten
 * (their semaphores had every permit back), and at most 100,000 are kept. The pool share and the turns each
 * keep one.
 */
final class TenantPermits {

    private final int permits;
    private final Cache<String, Semaphore> tenants =
            Caffeine.newBuilder().expireAfterAccess(Duration.ofMinutes(10)).maximumSize(100_000).build();

    TenantPermits(int permits) {
        this.permits = permits;
    }

    int permits() {
        return permits;
    }

    Semaphore of(String tenant) {
        return tenants.get(tenant, t -> new Semaphore(permits, true));
    }

    /** Requests of the tenant waiting for a permit now (for tests and diagnosis). */
    int waiting(String tenant) {
        Semaphore permit = tenants.getIfPresent(tenant);
        return permit == null ? 0 : permit.getQueueLength();
    }
}
