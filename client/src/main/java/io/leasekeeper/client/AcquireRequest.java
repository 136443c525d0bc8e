package io.leasekeeper.client;

import java.util.Map;
import java.util.Objects;

/**
 * An acquire: the key, who holds it ({@code holder}, 1..128 printable characters: the instance or job), its TTL,
 * and the optional fields of the contract. {@code waitSeconds} above 0 asks the service to wait for the key
 * (revision 1.1); null optional fields are not sent.
 */
public record AcquireRequest(LeaseKey key, String holder, int ttlSeconds, Integer maxLifetimeSeconds,
                             int lockDelaySeconds, int waitSeconds, String jobId, String traceId,
                             Map<String, Object> metadata) {

    public AcquireRequest {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(holder, "holder");
        metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
    }

    public static AcquireRequest of(LeaseKey key, String holder, int ttlSeconds) {
        return new AcquireRequest(key, holder, ttlSeconds, null, 0, 0, null, null, Map.of());
    }

    public AcquireRequest withWaitSeconds(int seconds) {
        return new AcquireRequest(key, holder, ttlSeconds, maxLifetimeSeconds, lockDelaySeconds, seconds, jobId,
                traceId, metadata);
    }

    public AcquireRequest withLockDelaySeconds(int seconds) {
        return new AcquireRequest(key, holder, ttlSeconds, maxLifetimeSeconds, seconds, waitSeconds, jobId,
                traceId, metadata);
    }

    public AcquireRequest withMaxLifetimeSeconds(int seconds) {
        return new AcquireRequest(key, holder, ttlSeconds, seconds, lockDelaySeconds, waitSeconds, jobId,
                traceId, metadata);
    }

    public AcquireRequest withJobId(String jobId) {
        return new AcquireRequest(key, holder, ttlSeconds, maxLifetimeSeconds, lockDelaySeconds, waitSeconds, jobId,
                traceId, metadata);
    }

    public AcquireRequest withTraceId(String traceId) {
        return new AcquireRequest(key, holder, ttlSeconds, maxLifetimeSeconds, lockDelaySeconds, waitSeconds, jobId,
                traceId, metadata);
    }

    public AcquireRequest withMetadata(Map<String, Object> metadata) {
        return new AcquireRequest(key, holder, ttlSeconds, maxLifetimeSeconds, lockDelaySeconds, waitSeconds, jobId,
                traceId, metadata);
    }
}
