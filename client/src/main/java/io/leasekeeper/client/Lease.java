package io.leasekeeper.client;

import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/**
 * A lease as the service answered it (contract, "Lease representation"). {@code state} is the effective state
 * at {@code serverTime}; {@code remainingMs} is {@code expiresAt - serverTime} on the service's clock, the only
 * clock a client may use to time the lease (from when it sent the request, on its own monotonic clock; from when
 * the answer arrived for an acquire that waited, within a margin: see {@link HeldLease}).
 */
public record Lease(UUID leaseId, String key, String tenant, String program, Target target, String actor,
                    String operation, String owner, String holder, long fencingToken, String state,
                    Instant acquiredAt, Instant renewedAt, Instant expiresAt, Instant maxExpiresAt, Instant endedAt,
                    String endReason, int ttlSeconds, int maxLifetimeSeconds, int lockDelaySeconds, long remainingMs,
                    Instant serverTime, String jobId, String traceId, Map<String, Object> metadata) {

    public boolean active() {
        return "active".equals(state);
    }
}
