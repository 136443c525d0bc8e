package io.leasekeeper.lease;

import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.UUID;

/** The contract's lease representation: the effective state at {@code serverTime}, PostgreSQL's clock. */
@Schema(name = "Lease", description = "A lease as it is at serverTime. All instants are RFC 3339 UTC with"
        + " milliseconds, from PostgreSQL's clock.")
record LeaseView(
        UUID leaseId,
        @Schema(description = "The canonical key: {tenant}/{program}/{type}:{value}/{actor}, plus /{operation} when"
                + " present; the value percent-encoded (RFC 3986 unreserved characters kept).") String key,
        @Schema(description = "The token's tenant.") String tenant,
        String program,
        TargetView target,
        String actor,
        @Schema(nullable = true, description = "Null when the key has no operation class.") String operation,
        @Schema(description = "The JWT subject of the acquirer: the only caller that renews or releases.") String owner,
        @Schema(description = "The service instance holding the lease, as the acquire named it.") String holder,
        @Schema(description = "Larger than the token of every earlier lease of this key (tokens of different keys are not comparable; "
                + "a lease is named by its leaseId); a renew never changes it.", minimum = "1")
        long fencingToken,
        @Schema(description = "The effective state: an active lease whose expiresAt has passed is expired, swept or"
                + " not.") LeaseState state,
        Instant acquiredAt,
        @Schema(nullable = true, description = "The last renewal; null before the first.")
        Instant renewedAt,
        Instant expiresAt,
        @Schema(description = "acquiredAt + maxLifetimeSeconds: no renewal reaches past it.") Instant maxExpiresAt,
        @Schema(nullable = true, description = "Null while active.") Instant endedAt,
        @Schema(nullable = true, description = "Why the lease ended; null while active.") String endReason,
        int ttlSeconds,
        int maxLifetimeSeconds,
        @Schema(description = "After an involuntary end (expired, revoked), the key cannot be acquired for this"
                + " long; a release frees it at once.", minimum = "0", maximum = "60") int lockDelaySeconds,
        @Schema(description = "expiresAt - serverTime; 0 when not active.", minimum = "0") long remainingMs,
        Instant serverTime,
        @Schema(nullable = true) String jobId,
        @Schema(nullable = true) String traceId,
        @Schema(description = "The client's JSON object, as given at acquire.") Metadata metadata) {

    @Schema(name = "LeaseTarget", description = "The target as normalized by the service.")
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
                lease.lockDelaySeconds(),
                lease.remainingMillisAt(now),
                now,
                lease.jobId(),
                lease.traceId(),
                lease.metadata());
    }
}
