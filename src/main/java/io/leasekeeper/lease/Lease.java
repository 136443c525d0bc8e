package io.leasekeeper.lease;

import io.leasekeeper.key.LeaseKey;
import java.time.Instant;
import java.util.UUID;

/**
 * One acquisition of a key, as stored. {@code storedState} is what the row says; the state a caller
 * sees is {@link #stateAt(Instant)}: an ACTIVE row whose expiry has passed is EXPIRED whether or not the
 * sweeper has recorded it yet. A lease is active while {@code now < expiresAt}; at the instant
 * {@code expiresAt} itself it has expired.
 */
record Lease(
        UUID id,
        LeaseKey key,
        String owner,
        String holder,
        long fencingToken,
        LeaseState storedState,
        Instant acquiredAt,
        Instant renewedAt,
        Instant expiresAt,
        Instant maxExpiresAt,
        Instant endedAt,
        String endReason,
        int ttlSeconds,
        int maxLifetimeSeconds,
        int lockDelaySeconds,
        String jobId,
        String traceId,
        Metadata metadata) {

    static final String EXPIRED_REASON = "expired";

    LeaseState stateAt(Instant now) {
        return storedState == LeaseState.ACTIVE && !now.isBefore(expiresAt) ? LeaseState.EXPIRED : storedState;
    }

    boolean activeAt(Instant now) {
        return stateAt(now) == LeaseState.ACTIVE;
    }

    long remainingMillisAt(Instant now) {
        return activeAt(now) ? expiresAt.toEpochMilli() - now.toEpochMilli() : 0;
    }
}
