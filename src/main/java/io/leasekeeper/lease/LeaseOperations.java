package io.leasekeeper.lease;

import io.leasekeeper.audit.AuditLog;
import io.leasekeeper.audit.EventType;
import io.leasekeeper.audit.NewEvent;
import io.leasekeeper.security.Caller;
import io.leasekeeper.web.ApiException;
import io.leasekeeper.web.ErrorCode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/**
 * Every lease transition, one transaction each. The rule that makes them safe together: a transaction
 * first locks the key's row, then reads the lease and PostgreSQL's clock, decides, and writes the
 * transition with its audit event. Acquire, renew, release, revoke and the sweeper of one key are thus
 * serialized, and each decides on rows no one else can change until it commits.
 */
@Component
public class LeaseOperations {

    static final String SWEEPER = "system:sweeper";
    static final String ACQUIRE_EXPIRY = "system:acquire";

    private final LeaseStore store;
    private final AuditLog audit;
    private final Counter expiredByAcquire;

    LeaseOperations(LeaseStore store, AuditLog audit, MeterRegistry registry) {
        this.store = store;
        this.audit = audit;
        this.expiredByAcquire = Expirations.counter(registry, "acquire");
    }

    /** The active leases' counts and the sweeper's lag, read in one statement. */
    @Transactional(readOnly = true)
    public ActiveCounts activeCounts() {
        return store.activeCounts();
    }

    /** Grants the key when it is free, first recording the expiry of an active lease whose TTL has passed. */
    @Transactional
    public AcquireResult acquireIfFree(AcquireCommand command, Caller caller) {
        long keyId = store.lockKey(command.key());
        LeaseStore.AtTime current = store.activeOfKey(keyId);
        Instant now = current.now();
        Lease active = current.lease();
        if (active != null && active.activeAt(now)) {
            return new AcquireResult.Held(active.owner(), active.holder(), active.expiresAt(),
                    active.remainingMillisAt(now));
        }
        if (active != null) {
            expire(active, now, ACQUIRE_EXPIRY, caller);
        }
        // A lease names the trace it was taken in: the client's traceId, else the request's own trace.
        String traceId = command.traceId() != null ? command.traceId() : caller.traceId();
        Lease granted = store.insertActive(keyId, command.key(), caller.subject(), command.holder(), now,
                command.ttlSeconds(), command.maxLifetimeSeconds(), command.jobId(), traceId, command.metadata());
        record(granted, EventType.ACQUIRED, null, now, caller, caller.subject(),
                Map.of("expiresAt", granted.expiresAt(), "ttlSeconds", granted.ttlSeconds()));
        return new AcquireResult.Granted(granted, now);
    }

    /** Extends an active lease of the caller; {@code ttlSeconds} null keeps the lease's TTL. */
    @Transactional
    public LeaseView renew(UUID leaseId, long fencingToken, Integer ttlSeconds, Caller caller) {
        LeaseStore.AtTime read = lockedLeaseOfOwner(leaseId, fencingToken, caller);
        Lease lease = read.lease();
        Instant now = read.now();
        requireActive(lease, now);
        int ttl = ttlSeconds != null ? ttlSeconds : lease.ttlSeconds();
        Lease renewed = store.renew(leaseId, now, ttl).orElseThrow(() -> changedUnderLock(leaseId));
        record(renewed, EventType.RENEWED, LeaseState.ACTIVE, now, caller, caller.subject(),
                Map.of("previousExpiresAt", lease.expiresAt(), "expiresAt", renewed.expiresAt(), "ttlSeconds", ttl));
        return LeaseView.of(renewed, now);
    }

    /** Compare-and-delete: ends the caller's active lease. Releasing an already released lease answers it again. */
    @Transactional
    public LeaseView releaseIfHeld(UUID leaseId, long fencingToken, Caller caller) {
        LeaseStore.AtTime read = lockedLeaseOfOwner(leaseId, fencingToken, caller);
        Lease lease = read.lease();
        Instant now = read.now();
        if (lease.stateAt(now) == LeaseState.RELEASED) {
            return LeaseView.of(lease, now);
        }
        requireActive(lease, now);
        Lease released = store.end(leaseId, now, LeaseState.RELEASED, "released")
                .orElseThrow(() -> changedUnderLock(leaseId));
        record(released, EventType.RELEASED, LeaseState.ACTIVE, now, caller, caller.subject(), Map.of());
        return LeaseView.of(released, now);
    }

    /** An admin ends an active lease of its tenant; the key is free at once. */
    @Transactional
    public LeaseView revoke(UUID leaseId, String reason, Caller admin) {
        LeaseStore.AtTime read = lockedLease(leaseId, admin.tenant());
        Instant now = read.now();
        LeaseState state = read.lease().stateAt(now);
        if (state != LeaseState.ACTIVE) {
            throw new ApiException(ErrorCode.LEASE_NOT_ACTIVE, "Lease " + leaseId + " is " + state.wireName() + ".");
        }
        Lease revoked = store.end(leaseId, now, LeaseState.REVOKED, reason)
                .orElseThrow(() -> changedUnderLock(leaseId));
        record(revoked, EventType.REVOKED, LeaseState.ACTIVE, now, admin, admin.subject(), Map.of("reason", reason));
        return LeaseView.of(revoked, now);
    }

    /**
     * One sweeper batch: records the expiry of up to {@code batchSize} due leases whose keys no one else
     * has locked. Returns how many it expired.
     */
    @Transactional
    public int expireDue(int batchSize) {
        return store.expireDue(batchSize, SWEEPER);
    }

    private void expire(Lease lease, Instant now, String principal, Caller caller) {
        if (!store.expire(lease.id(), now)) {
            throw changedUnderLock(lease.id());
        }
        audit.record(new NewEvent(lease.id(), EventType.EXPIRED, LeaseState.ACTIVE.wireName(),
                LeaseState.EXPIRED.wireName(), lease.fencingToken(), now, principal, caller.requestId(),
                caller.traceId(), Map.of("expiresAt", lease.expiresAt())));
        Expirations.afterCommit(expiredByAcquire, 1);
    }

    /** Locks the lease's key and checks, in this order: it exists in the tenant, the caller owns it, the token is its own. */
    private LeaseStore.AtTime lockedLeaseOfOwner(UUID leaseId, long fencingToken, Caller caller) {
        LeaseStore.AtTime read = lockedLease(leaseId, caller.tenant());
        Lease lease = read.lease();
        if (!lease.owner().equals(caller.subject())) {
            throw new ApiException(ErrorCode.NOT_LEASE_OWNER, "Only the owner of lease " + leaseId + " may do this.");
        }
        if (lease.fencingToken() != fencingToken) {
            throw new ApiException(ErrorCode.FENCING_TOKEN_MISMATCH,
                    "The fencing token does not match lease " + leaseId + ".");
        }
        return read;
    }

    /** Locks the key of a lease of this tenant, then reads the lease and the time of the decision. */
    private LeaseStore.AtTime lockedLease(UUID leaseId, String tenant) {
        store.lockKeyOfLease(leaseId, tenant).orElseThrow(() -> notFound(leaseId));
        return store.byId(leaseId, tenant).orElseThrow(() -> notFound(leaseId));
    }

    /** An ended lease answers 410 with why it ended; an expired one is never revived. */
    private static void requireActive(Lease lease, Instant now) {
        switch (lease.stateAt(now)) {
            case ACTIVE -> { }
            case EXPIRED -> throw new ApiException(ErrorCode.LEASE_EXPIRED, "Lease " + lease.id() + " has expired.");
            case RELEASED -> throw new ApiException(ErrorCode.LEASE_RELEASED, "Lease " + lease.id() + " was released.");
            case REVOKED -> throw new ApiException(ErrorCode.LEASE_REVOKED, "Lease " + lease.id() + " was revoked.");
        }
    }

    private void record(Lease lease, EventType type, LeaseState from, Instant now, Caller caller, String principal,
                        Map<String, Object> details) {
        audit.record(new NewEvent(lease.id(), type, from == null ? null : from.wireName(),
                lease.storedState().wireName(), lease.fencingToken(), now, principal, caller.requestId(),
                caller.traceId(), details));
    }

    private static ApiException notFound(UUID leaseId) {
        return new ApiException(ErrorCode.LEASE_NOT_FOUND, "No lease " + leaseId + ".");
    }

    /** A write under the key lock that changed nothing means the locking rule was broken: fail, never pretend. */
    private static IllegalStateException changedUnderLock(UUID leaseId) {
        return new IllegalStateException("lease " + leaseId + " changed while its key was locked");
    }
}
