package io.leasekeeper.lease;

import java.time.Instant;
import java.util.UUID;

/** The contract's lease representation: the effective state at {@code serverTime}, PostgreSQL's clock. */
record LeaseView(
        UUID leaseId,
        String key,
        String tenant,
        String program,
        TargetView target,
        String actor,
        String operation,
        String owner,
        String holder,
        long fencingToken,
        LeaseState state,
        Instant acquiredAt,
        Instant renewedAt,
        Instant expiresAt,
        Instant maxExpiresAt,
        Instant endedAt,
        String endReason,
        int ttlSeconds,
        int maxLifetimeSeconds,
        long remainingMs,
        Instant serverTime,
        String jobId,
        String traceId,
        Metadata metadata) {

    record TargetView(String type, String value) {
    }

    static LeaseView of(Lease lease, Instant now) {
        LeaseState state = lease.stateAt(now);
        boolean expiredUnrecorded = state == LeaseState.EXPIRED && lease.storedState() == LeaseState.ACTIVE;
        var key = lease.key();
        return new LeaseView(
                lease.id(),
                key.canonical(),
                key.tenant(),
                key.program(),
                new TargetView(key.target().type().wireName(), key.target().value()),
                key.actor(),
                key.operation(),
                lease.owner(),
                lease.holder(),
                lease.fencingToken(),
                state,
                lease.acquiredAt(),
                lease.renewedAt(),
                lease.expiresAt(),
                lease.maxExpiresAt(),
                // Shown exactly as the sweeper will record it: ended at its expiry, reason "expired".
                expiredUnrecorded ? lease.expiresAt() : lease.endedAt(),
                expiredUnrecorded ? Lease.EXPIRED_REASON : lease.endReason(),
                lease.ttlSeconds(),
                lease.maxLifetimeSeconds(),
                lease.remainingMillisAt(now),
                now,
                lease.jobId(),
                lease.traceId(),
                lease.metadata());
    }
}
