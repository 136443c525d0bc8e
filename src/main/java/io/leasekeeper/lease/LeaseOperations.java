package io.leasekeeper.lease;

import io.leasekeeper.idempotency.IdempotencyStore;
import io.leasekeeper.limits.TenantQuota;
import io.leasekeeper.security.Caller;
import io.leasekeeper.wait.KeyWaiters;
import io.leasekeeper.web.ErrorCode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Every lease transition, each one call of a database function (LeaseStore), in autocommit or inside the transaction
 * of an Idempotency-Key's claim. The rule that makes them safe together is the functions': a transition first locks
 * the key's row, then reads the lease and PostgreSQL's clock, makes the transition if it is allowed and writes its
 * audit event (docs/concepts/locking.md). What a call leaves to the service happens here, once it has committed: the
 * waiting request a freed key was offered to is woken, and the expiries an acquire recorded are counted. When a
 * transition changed nothing, the lease as it was tells which refusal to answer.
 */
@Component
public class LeaseOperations {

    private final LeaseStore store;
    private final LeaseReads reads;
    private final WatchMarks marks;
    private final KeyWaiters waiters;
    private final TenantQuota quota;
    private final Heartbeats heartbeats;
    private final Counter expiredByAcquire;

    LeaseOperations(LeaseStore store, LeaseReads reads, WatchMarks marks, KeyWaiters waiters, TenantQuota quota,
                    Heartbeats heartbeats, MeterRegistry registry) {
        this.store = store;
        this.reads = reads;
        this.marks = marks;
        this.waiters = waiters;
        this.quota = quota;
        this.heartbeats = heartbeats;
        this.expiredByAcquire = Expirations.counter(registry, "acquire");
    }

    /** The active leases' counts and the sweeper's lag, read in one statement. */
    @Transactional(readOnly = true)
    public ActiveCounts activeCounts() {
        return reads.activeCounts();
    }

    /**
     * An acquire, in one call (lease_acquire): grants the key when it is free, first recording the expiry of an active
     * lease whose TTL has passed; busy while another lease holds it, its lock-delay runs, or it is offered to a waiting
     * request. A free key that waiting acquires queue for goes to the longest-waiting of them first (a hand-over), and
     * this acquire finds it held. {@code attempt} says which try of a waiting acquire this is ({@code waiterId} its
     * queue row; the first try's busy key queues the row, under the request's {@code idempotency} when it has one), or
     * that it does not wait. A tenant at its quota is refused a free key (429), never a busy one.
     */
    LeaseOutcome acquire(AcquireCommand command, Caller caller, LeaseStore.Try attempt, UUID waiterId,
                         IdempotencyStore.Request idempotency) {
        String tenant = caller.tenant();
        boolean reserved = quota.reserve(tenant);
        LeaseStore.Acquired acquired = null;
        try {
            acquired = store.acquire(command, caller, reserved, attempt, waiterId, idempotency);
        } finally {
            if (reserved && (acquired == null || acquired.outcome() != LeaseStore.Outcome.GRANTED)) {
                quota.unreserve(tenant);
            }
        }
        if (acquired.expired() > 0) {
            int expired = acquired.expired();
            afterCommit(() -> expiredByAcquire.increment(expired));
        }
        if (acquired.offered() != null) {
            offered(acquired.offered());
        }
        Instant now = acquired.now();
        return switch (acquired.outcome()) {
            case GRANTED -> new LeaseOutcome.Granted(acquired.lease(), now);
            case HELD -> new LeaseOutcome.Held(acquired.keyId(), acquired.owner(), acquired.holder(),
                    acquired.expiresAt(), acquired.expiresAt().toEpochMilli() - now.toEpochMilli());
            case DELAYED -> new LeaseOutcome.Delayed(acquired.keyId(), acquired.delayedUntil(),
                    acquired.delayedUntil().toEpochMilli() - now.toEpochMilli());
            case OVER_QUOTA -> new LeaseOutcome.Refused(ErrorCode.QUOTA_EXCEEDED, quota.refuse());
            case KEY_REUSED -> new LeaseOutcome.Refused(ErrorCode.IDEMPOTENCY_KEY_REUSED,
                    "This Idempotency-Key was used for a different request.");
            default -> throw new IllegalStateException("lease_acquire answered " + acquired.outcome()
                    + ", which it never answers");
        };
    }

    /**
     * A waiting acquire whose client has gone (or that fails) leaves the key's queue, in one call (lease_leave_queue),
     * and the key, when it was offered to its row, goes on to the next row or is free: no lease is made for a request
     * that will not answer.
     */
    void abandonQueue(UUID waiterId, Caller caller) {
        UUID next = store.leaveQueue(caller.tenant(), waiterId);
        if (next != null) {
            offered(next);
        }
    }

    /** Extends an active lease of the caller, in one call; {@code ttlSeconds} null keeps the lease's TTL. */
    public LeaseOutcome renew(UUID leaseId, long fencingToken, Integer ttlSeconds, Caller caller) {
        Optional<LeaseStore.Renewal> renewal = store.renew(leaseId, fencingToken, ttlSeconds, caller);
        if (renewal.isEmpty()) {
            return notFound(leaseId);
        }
        LeaseStore.Call renew = renewal.get().call();
        return switch (renew.outcome()) {
            case RENEWED -> {
                heartbeats.record(renewal.get().beat());
                yield new LeaseOutcome.Changed(renew.lease(), renew.now());
            }
            case UNCHANGED -> refused(renew.lease(), renew.now(), fencingToken, caller)
                    .orElseThrow(() -> changedUnderLock("lease_renew", leaseId));
            default -> throw renew.unexpected("lease_renew");
        };
    }

    /**
     * Compare-and-delete: ends the caller's active lease, in one call (lease_end), which hands a key someone waits
     * for to its queue. Releasing an already released lease answers it again.
     */
    public LeaseOutcome releaseIfHeld(UUID leaseId, long fencingToken, Caller caller) {
        Optional<LeaseStore.Ended> ended = store.end(leaseId, LeaseState.RELEASED, fencingToken, "released", caller);
        if (ended.isEmpty()) {
            return notFound(leaseId);
        }
        LeaseStore.Call release = ended.get().call();
        return switch (release.outcome()) {
            case RELEASED -> changed(ended.get());
            case UNCHANGED -> unreleased(release.lease(), release.now(), fencingToken, caller);
            default -> throw release.unexpected("lease_end");
        };
    }

    /** A release that changed nothing: answered again when the lease is released already, else refused. */
    private static LeaseOutcome unreleased(Lease lease, Instant now, long fencingToken, Caller caller) {
        Optional<LeaseOutcome.Refused> notTheirs = notOwnerOrToken(lease, fencingToken, caller);
        if (notTheirs.isPresent()) {
            return notTheirs.get();
        }
        if (lease.stateAt(now) == LeaseState.RELEASED) {
            return new LeaseOutcome.Changed(lease, now);
        }
        return ended(lease, now).orElseThrow(() -> changedUnderLock("lease_end (released)", lease.id()));
    }

    /** An admin ends an active lease of its tenant, in one call (lease_end); the key is free at once. */
    public LeaseOutcome revoke(UUID leaseId, String reason, Caller admin) {
        Optional<LeaseStore.Ended> ended = store.end(leaseId, LeaseState.REVOKED, null, reason, admin);
        if (ended.isEmpty()) {
            return notFound(leaseId);
        }
        LeaseStore.Call revoke = ended.get().call();
        return switch (revoke.outcome()) {
            case REVOKED -> changed(ended.get());
            case UNCHANGED -> {
                LeaseState state = revoke.lease().stateAt(revoke.now());
                if (state == LeaseState.ACTIVE) {
                    throw changedUnderLock("lease_end (revoked)", leaseId);
                }
                yield new LeaseOutcome.Refused(ErrorCode.LEASE_NOT_ACTIVE,
                        "Lease " + leaseId + " is " + state.wireName() + ".");
            }
            default -> throw revoke.unexpected("lease_end");
        };
    }

    /** The ended lease; the waiting request the freed key was offered to is woken once the call has committed. */
    private LeaseOutcome changed(LeaseStore.Ended ended) {
        if (ended.offered() != null) {
            offered(ended.offered());
        }
        return new LeaseOutcome.Changed(ended.call().lease(), ended.call().now());
    }

    /**
     * A watch of a lease marks its key watched for {@code seconds} (its own short transaction): a transition
     * that frees the key then notifies. Returns the key's id; empty when the tenant has no such lease.
     */
    @Transactional
    public Optional<Long> watchKeyOfLease(UUID leaseId, String tenant, int seconds) {
        return marks.watchKeyOfLease(leaseId, tenant, seconds);
    }

    /**
     * The key was offered to a waiting acquire, and the call notified every instance (the waiter, and the watchers of
     * the key's last lease): a waiter of this instance is woken at once when the call has committed, without waiting
     * for the notification's round trip.
     */
    private void offered(UUID waiterId) {
        afterCommit(() -> waiters.offered(waiterId));
    }

    /** Runs {@code action} once the call has committed: now in autocommit, else when the transaction commits. */
    private static void afterCommit(Runnable action) {
        if (!TransactionSynchronizationManager.isSynchronizationActive()) {
            action.run();
            return;
        }
        TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
            @Override
            public void afterCommit() {
                action.run();
            }
        });
    }

    /** Why an owner's transition changed nothing: the caller is not the owner, the token is not the lease's, or it ended. */
    private static Optional<LeaseOutcome.Refused> refused(Lease lease, Instant now, long fencingToken, Caller caller) {
        return notOwnerOrToken(lease, fencingToken, caller).or(() -> ended(lease, now));
    }

    /** Checked first: the caller owns the lease, then the token is its own. */
    private static Optional<LeaseOutcome.Refused> notOwnerOrToken(Lease lease, long fencingToken, Caller caller) {
        if (!lease.owner().equals(caller.subject())) {
            return Optional.of(new LeaseOutcome.Refused(ErrorCode.NOT_LEASE_OWNER,
                    "Only the owner of lease " + lease.id() + " may do this."));
        }
        if (lease.fencingToken() != fencingToken) {
            return Optional.of(new LeaseOutcome.Refused(ErrorCode.FENCING_TOKEN_MISMATCH,
                    "The fencing token does not match lease " + lease.id() + "."));
        }
        return Optional.empty();
    }

    /** An ended lease is refused with why it ended (410); an expired one is never revived. Empty: it is active. */
    private static Optional<LeaseOutcome.Refused> ended(Lease lease, Instant now) {
        return Optional.ofNullable(switch (lease.stateAt(now)) {
            case ACTIVE -> null;
            case EXPIRED -> new LeaseOutcome.Refused(ErrorCode.LEASE_EXPIRED, "Lease " + lease.id() + " has expired.");
            case RELEASED -> new LeaseOutcome.Refused(ErrorCode.LEASE_RELEASED, "Lease " + lease.id() + " was released.");
            case REVOKED -> new LeaseOutcome.Refused(ErrorCode.LEASE_REVOKED, "Lease " + lease.id() + " was revoked.");
        });
    }

    private static LeaseOutcome.Refused notFound(UUID leaseId) {
        return new LeaseOutcome.Refused(ErrorCode.LEASE_NOT_FOUND, "No lease " + leaseId + ".");
    }

    /** A write under the key lock that changed nothing means the locking rule was broken: fail, never pretend. */
    private static IllegalStateException changedUnderLock(String function, UUID leaseId) {
        return new IllegalStateException(function + " on lease " + leaseId + ": it changed no row, though the lease"
                + " allowed the change and its key was locked (rolled back)");
    }
}
