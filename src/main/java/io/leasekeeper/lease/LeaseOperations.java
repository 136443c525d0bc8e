package io.leasekeeper.lease;

import io.leasekeeper.config.LeasekeeperProperties;
import io.leasekeeper.security.Caller;
import io.leasekeeper.web.ApiException;
import io.leasekeeper.web.ErrorCode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/**
 * Every lease transition, one transaction each. The rule that makes them safe together: a transaction
 * first locks the key's row, then runs one statement that reads the lease and PostgreSQL's clock, makes
 * the transition if it is allowed and writes its audit event. Acquire, renew, release, revoke and the
 * sweeper of one key are thus serialized, and each decides on rows no one else can change until it
 * commits. When the statement changed nothing, the lease as it was tells which refusal to answer.
 */
@Component
public class LeaseOperations {

    static final String SWEEPER = "system:sweeper";
    static final String ACQUIRE_EXPIRY = "system:acquire";

    private final LeaseStore store;
    private final Counter expiredByAcquire;
    private final boolean notifications;
    /** How far ahead a watch mark reaches: twice the longest wait, so that most waits find it long enough. */
    private final int watchHorizon;

    LeaseOperations(LeaseStore store, MeterRegistry registry, LeasekeeperProperties properties) {
        this.store = store;
        this.expiredByAcquire = Expirations.counter(registry, "acquire");
        this.notifications = properties.waiting().notifications();
        this.watchHorizon = 2 * ((int) properties.waiting().max().toSeconds() + 1);
    }

    /** The active leases' counts and the sweeper's lag, read in one statement. */
    @Transactional(readOnly = true)
    public ActiveCounts activeCounts() {
        return store.activeCounts();
    }

    /**
     * Grants the key when it is free, first recording the expiry of an active lease whose TTL has passed;
     * busy while another lease holds it or its lock-delay runs. A busy answer to a waiting acquire
     * ({@code waitSeconds} > 0) also marks the key watched for that long, in the same transaction, so that
     * the transition freeing it notifies the waiters.
     */
    @Transactional
    public AcquireResult acquireIfFree(AcquireCommand command, Caller caller) {
        int watchSeconds = command.waitSeconds() + 1;
        if (command.waitSeconds() > 0) {
            Optional<AcquireResult.Busy> busy = busyAndWatched(command, watchSeconds);
            if (busy.isPresent()) {
                return busy.get();
            }
        }
        AcquireResult result = acquireOrBusy(command, caller);
        if (result instanceof AcquireResult.Busy busy && command.waitSeconds() > 0) {
            store.watchKey(busy.keyId(), watchSeconds, watchHorizon);
        }
        return result;
    }

    /**
     * A waiting acquire first looks at the key without locking it: a key busy and marked watched for as long as
     * this request may wait is answered busy with no lock and no write (so a waiter's try does not queue on
     * the key's row lock and its commit behind the holder's). Whatever frees the key later holds its lock,
     * sees the mark, and notifies. Any other key goes the locking way.
     */
    private Optional<AcquireResult.Busy> busyAndWatched(AcquireCommand command, int watchSeconds) {
        return store.peek(command.key(), watchSeconds).filter(LeaseStore.Peek::watched).map(peek -> {
            if (peek.delayedUntil() != null) {
                return delayed(peek.keyId(), peek.delayedUntil(), peek.now());
            }
            if (peek.expiresAt() != null) {
                return new AcquireResult.Held(peek.keyId(), peek.owner(), peek.holder(), peek.expiresAt(),
                        peek.expiresAt().toEpochMilli() - peek.now().toEpochMilli());
            }
            return null;
        });
    }

    private AcquireResult acquireOrBusy(AcquireCommand command, Caller caller) {
        LeaseStore.KeyLock key = store.lockKey(command.key());
        if (key.delayedUntil() != null) {
            return delayed(key.id(), key.delayedUntil(), key.now());
        }
        // A lease names the trace it was taken in: the client's traceId, else the request's own trace.
        String traceId = command.traceId() != null ? command.traceId() : caller.traceId();
        LeaseStore.Transition acquire = store.acquireIfFree(key.id(), command, traceId, caller);
        if (!acquire.changed()) {
            Lease active = acquire.lease();
            Instant now = acquire.now();
            if (active.activeAt(now)) {
                return new AcquireResult.Held(key.id(), active.owner(), active.holder(), active.expiresAt(),
                        active.remainingMillisAt(now));
            }
            // Past its TTL, not yet recorded by the sweeper: record its expiry, then the key is free, unless
            // the lease's lock-delay keeps it.
            LeaseStore.Expiry expiry = store.expire(active.id(), ACQUIRE_EXPIRY, caller);
            if (!expiry.expired()) {
                throw changedUnderLock(active.id());
            }
            Expirations.afterCommit(expiredByAcquire, 1);
            if (key.watched()) {
                freed(Long.toString(key.id()));
            }
            if (expiry.delayedUntil() != null) {
                return delayed(key.id(), expiry.delayedUntil(), now);
            }
            acquire = store.acquireIfFree(key.id(), command, traceId, caller);
            if (!acquire.changed()) {
                throw changedUnderLock(acquire.lease().id());
            }
        }
        return new AcquireResult.Granted(acquire.lease(), acquire.now());
    }

    private static AcquireResult.Delayed delayed(long keyId, Instant availableAt, Instant now) {
        return new AcquireResult.Delayed(keyId, availableAt, availableAt.toEpochMilli() - now.toEpochMilli());
    }

    /** Extends an active lease of the caller; {@code ttlSeconds} null keeps the lease's TTL. */
    @Transactional
    public LeaseView renew(UUID leaseId, long fencingToken, Integer ttlSeconds, Caller caller) {
        lockKeyOfLease(leaseId, caller.tenant());
        LeaseStore.Transition renew = store.renew(leaseId, fencingToken, ttlSeconds, caller)
                .orElseThrow(() -> notFound(leaseId));
        if (!renew.changed()) {
            requireOwnerAndToken(renew.lease(), fencingToken, caller);
            requireActive(renew.lease(), renew.now());
            throw changedUnderLock(leaseId);
        }
        return LeaseView.of(renew.lease(), renew.now());
    }

    /** Compare-and-delete: ends the caller's active lease. Releasing an already released lease answers it again. */
    @Transactional
    public LeaseView releaseIfHeld(UUID leaseId, long fencingToken, Caller caller) {
        LeaseStore.KeyLock key = lockKeyOfLease(leaseId, caller.tenant());
        LeaseStore.Transition release = store.release(leaseId, fencingToken, caller)
                .orElseThrow(() -> notFound(leaseId));
        if (release.changed() && key.watched()) {
            freed(Long.toString(key.id()));
        }
        if (!release.changed()) {
            requireOwnerAndToken(release.lease(), fencingToken, caller);
            if (release.lease().stateAt(release.now()) != LeaseState.RELEASED) {
                requireActive(release.lease(), release.now());
                throw changedUnderLock(leaseId);
            }
        }
        return LeaseView.of(release.lease(), release.now());
    }

    /** An admin ends an active lease of its tenant; the key is free at once. */
    @Transactional
    public LeaseView revoke(UUID leaseId, String reason, Caller admin) {
        LeaseStore.KeyLock key = lockKeyOfLease(leaseId, admin.tenant());
        LeaseStore.Transition revoke = store.revoke(leaseId, reason, admin).orElseThrow(() -> notFound(leaseId));
        if (revoke.changed() && key.watched()) {
            freed(Long.toString(key.id()));
        }
        if (!revoke.changed()) {
            LeaseState state = revoke.lease().stateAt(revoke.now());
            if (state == LeaseState.ACTIVE) {
                throw changedUnderLock(leaseId);
            }
            throw new ApiException(ErrorCode.LEASE_NOT_ACTIVE, "Lease " + leaseId + " is " + state.wireName() + ".");
        }
        return LeaseView.of(revoke.lease(), revoke.now());
    }

    /**
     * One sweeper batch: records the expiry of up to {@code batchSize} due leases whose keys no one else
     * has locked, and notifies the waiters of those keys, one notification for the batch. Returns how many
     * it expired.
     */
    @Transactional
    public int expireDue(int batchSize) {
        LeaseStore.Sweep sweep = store.expireDue(batchSize, SWEEPER);
        if (sweep.watchedKeys() != null) {
            freed(sweep.watchedKeys());
        }
        return sweep.expired();
    }

    /**
     * A watch of a lease marks its key watched for {@code seconds} (its own short transaction): a transition
     * that frees the key then notifies. Returns the key's id; empty when the tenant has no such lease.
     */
    @Transactional
    public Optional<Long> watchKeyOfLease(UUID leaseId, String tenant, int seconds) {
        return store.watchKeyOfLease(leaseId, tenant, seconds, watchHorizon);
    }

    /** Locks the key of a lease of this tenant, or answers that the tenant has no such lease. */
    private LeaseStore.KeyLock lockKeyOfLease(UUID leaseId, String tenant) {
        return store.lockKeyOfLease(leaseId, tenant).orElseThrow(() -> notFound(leaseId));
    }

    /** Someone waits for these keys, just freed by this transaction: tell every instance when it commits. */
    private void freed(String keyIds) {
        if (notifications) {
            store.notifyFreed(keyIds);
        }
    }

    /** Why an owner's transition changed nothing, checked first: the caller owns the lease, then the token is its own. */
    private static void requireOwnerAndToken(Lease lease, long fencingToken, Caller caller) {
        if (!lease.owner().equals(caller.subject())) {
            throw new ApiException(ErrorCode.NOT_LEASE_OWNER, "Only the owner of lease " + lease.id() + " may do this.");
        }
        if (lease.fencingToken() != fencingToken) {
            throw new ApiException(ErrorCode.FENCING_TOKEN_MISMATCH,
                    "The fencing token does not match lease " + lease.id() + ".");
        }
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

    private static ApiException notFound(UUID leaseId) {
        return new ApiException(ErrorCode.LEASE_NOT_FOUND, "No lease " + leaseId + ".");
    }

    /** A write under the key lock that changed nothing means the locking rule was broken: fail, never pretend. */
    private static IllegalStateException changedUnderLock(UUID leaseId) {
        return new IllegalStateException("lease " + leaseId + " changed while its key was locked");
    }
}
