package io.leasekeeper.lease;

import io.leasekeeper.config.LeasekeeperProperties;
import io.leasekeeper.limits.TenantQuota;
import io.leasekeeper.idempotency.IdempotencyStore;
import io.leasekeeper.security.Caller;
import io.leasekeeper.wait.FreedKeys;
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
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Every lease transition, each atomic on its own. The rule that makes them safe together: a transition first
 * locks the key's row, then reads the lease and PostgreSQL's clock, makes the transition if it is allowed and
 * writes its audit event. Acquire, renew, release, revoke and the sweeper of one key are thus serialized, and
 * each decides on rows no one else can change until it commits. When a transition changed nothing, the lease as
 * it was tells which refusal to answer. The 1.0 acquire, the renew, the release and the revoke are one call each
 * (a function of the database, in autocommit); what the acquire's function leaves to the service (a key someone
 * waits for or watches, an unswept expiry) runs on the locking path: one transaction of several statements.
 */
@Component
public class LeaseOperations {

    static final String ACQUIRE_EXPIRY = "system:acquire";

    private final LeaseStore store;
    private final LeaseReads reads;
    private final WaiterQueue queue;
    private final KeyWaiters waiters;
    private final TenantQuota quota;
    private final Heartbeats heartbeats;
    private final TransactionTemplate transaction;
    private final Counter expiredByAcquire;
    private final boolean notifications;
    /** How far ahead a watch mark reaches: twice the longest wait, so that most waits find it long enough. */
    private final int watchHorizon;

    LeaseOperations(LeaseStore store, LeaseReads reads, WaiterQueue queue, KeyWaiters waiters, TenantQuota quota, Heartbeats heartbeats,
                    TransactionTemplate transaction, MeterRegistry registry, LeasekeeperProperties properties) {
        this.store = store;
        this.reads = reads;
        this.queue = queue;
        this.waiters = waiters;
        this.quota = quota;
        this.heartbeats = heartbeats;
        this.transaction = transaction;
        this.expiredByAcquire = Expirations.counter(registry, "acquire");
        this.notifications = properties.waiting().notifications();
        this.watchHorizon = 2 * ((int) properties.waiting().max().toSeconds() + 1);
    }

    /** The active leases' counts and the sweeper's lag, read in one statement. */
    @Transactional(readOnly = true)
    public ActiveCounts activeCounts() {
        return reads.activeCounts();
    }

    /**
     * A 1.0 acquire: grants the key when it is free, first recording the expiry of an active lease whose TTL
     * has passed; busy while another lease holds it or its lock-delay runs. A free key that waiting acquires
     * queue for goes to the longest-waiting of them first (a hand-over), and this acquire finds it held.
     * One call (lease_acquire) grants or answers busy; a key someone waits for or watches, or whose lease has
     * passed its TTL unrecorded, and a grant the quota may refuse take the locking path, one transaction.
     */
    public LeaseOutcome acquireIfFree(AcquireCommand command, Caller caller) {
        String tenant = caller.tenant();
        if (quota.reserve(tenant)) {
            LeaseOutcome answered = null;
            try {
                answered = acquireInOneCall(command, caller);
            } finally {
                if (!(answered instanceof LeaseOutcome.Granted)) {
                    quota.unreserve(tenant);
                }
            }
            if (answered != null) {
                return answered;
            }
        }
        return transaction.execute(tx -> acquireOrBusy(command, caller, null));
    }

    /** The acquire's one call; null when it left the key to the locking path, having changed nothing. */
    private LeaseOutcome acquireInOneCall(AcquireCommand command, Caller caller) {
        LeaseStore.Acquired acquired = store.acquire(command, leaseTraceId(command, caller), caller);
        LeaseStore.Call call = acquired.call();
        return switch (call.outcome()) {
            case GRANTED -> new LeaseOutcome.Granted(call.lease(), call.now());
            case HELD -> new LeaseOutcome.Held(acquired.keyId(), call.lease().owner(), call.lease().holder(),
                    call.lease().expiresAt(), call.lease().remainingMillisAt(call.now()));
            case DELAYED -> delayed(acquired.keyId(), acquired.delayedUntil(), call.now());
            case LOCKED_PATH -> null;
            default -> throw call.unexpected("lease_acquire");
        };
    }

    /**
     * A waiting acquire's first try: as {@link #acquireIfFree}, and when the key is busy the request's row
     * joins the key's queue (the key marked watched, so that the transition freeing it offers it to the queue and
     * notifies). A key busy and already marked watched for as long as this request may wait is looked at
     * without its lock, and the row written without it: the try then neither queues on the key's row lock nor
     * delays the holder's transitions. A retry (the same Idempotency-Key and request) takes over its first request's
     * row, with its place, and takes the key if it was offered to that row. The same Idempotency-Key with a
     * different request, while a row of the first is in the queue, is 422 IDEMPOTENCY_KEY_REUSED.
     */
    @Transactional
    public LeaseOutcome acquireOrQueue(AcquireCommand command, Caller caller, UUID waiterId,
                                        IdempotencyStore.Request idempotency) {
        int watchSeconds = command.waitSeconds() + 1;
        Optional<LeaseOutcome.Busy> watched = busyAndWatched(command, watchSeconds);
        LeaseOutcome result = watched.isPresent() ? watched.get() : acquireOrBusy(command, caller, null);
        if (result instanceof LeaseOutcome.Busy busy) {
            if (watched.isEmpty()) {
                queue.watchKey(caller.tenant(), busy.keyId(), watchSeconds, watchHorizon);
            }
            switch (queue.queue(waiterId, busy.keyId(), command, leaseTraceId(command, caller), caller, idempotency)) {
                case QUEUED -> { }
                case OFFERED -> {
                    return acquireOrBusy(command, caller, waiterId);
                }
                case KEY_REUSED -> { // the idempotency record could not refuse it: a busy try gives its claim up
                    return new LeaseOutcome.Refused(ErrorCode.IDEMPOTENCY_KEY_REUSED,
                            "This Idempotency-Key was used for a different request.");
                }
            }
        }
        return result;
    }

    /**
     * A queued waiting acquire's later try, made once it has seen its client still there: the key when it is offered
     * to this request's row, or when it is free and that row is the first of its queue; else as {@link #acquireIfFree},
     * where a free key is offered to the first row of the queue.
     */
    @Transactional
    public LeaseOutcome tryQueued(AcquireCommand command, Caller caller, UUID waiterId) {
        return acquireOrBusy(command, caller, waiterId);
    }

    /**
     * A waiting acquire answers at its deadline (or as the service stops): it takes the key if it is offered to it
     * (or free, with its row first), else leaves the key's queue with a 1.0 acquire's answer.
     */
    @Transactional
    public LeaseOutcome leaveQueue(AcquireCommand command, Caller caller, UUID waiterId) {
        // The key's lock before the row's, as a hand-over takes them (it updates the row under the key's lock):
        // the other order deadlocks with a release offering the key to this very row.
        LeaseOutcome answer = acquireOrBusy(command, caller, waiterId);
        queue.leaveQueue(caller.tenant(), waiterId); // the row, unless the key was granted to it
        return answer;
    }

    /**
     * A waiting acquire whose client has gone (or that fails) leaves the key's queue, and the key, when it was offered
     * to its row, goes on to the next row or is free: no lease is made for a request that will not answer.
     */
    @Transactional
    public void abandonQueue(AcquireCommand command, UUID waiterId, Caller caller) {
        LeaseStore.KeyLock key = store.lockKey(command.key()); // before the row's, as in leaveQueue
        queue.leaveQueue(caller.tenant(), waiterId);
        handOver(key, null);
    }

    /**
     * A waiting acquire first looks at the key without locking it: a key busy and marked watched for as long as
     * this request may wait is answered busy with no lock (so a waiter's try does not queue on the key's row
     * lock and its commit behind the holder's). Whatever frees the key later holds its lock and sees the mark
     * and the queue. Any other key goes the locking way.
     */
    private Optional<LeaseOutcome.Busy> busyAndWatched(AcquireCommand command, int watchSeconds) {
        return queue.peek(command.key(), watchSeconds).filter(WaiterQueue.Peek::watched).map(peek -> {
            if (peek.delayedUntil() != null) {
                return delayed(peek.keyId(), peek.delayedUntil(), peek.now());
            }
            if (peek.expiresAt() != null) {
                return new LeaseOutcome.Held(peek.keyId(), peek.owner(), peek.holder(), peek.expiresAt(),
                        peek.expiresAt().toEpochMilli() - peek.now().toEpochMilli());
            }
            return null;
        });
    }

    /**
     * With the key locked: a free key goes first to its queue of waiting acquires, when anyone waits for it
     * ({@code waiterId}: this request is one of them), else to this request.
     */
    private LeaseOutcome acquireOrBusy(AcquireCommand command, Caller caller, UUID waiterId) {
        LeaseStore.KeyLock key = store.lockKey(command.key());
        if (key.delayedUntil() != null) {
            return delayed(key.id(), key.delayedUntil(), key.now());
        }
        boolean queued = key.watched() || waiterId != null;
        if (queued) {
            Optional<LeaseOutcome> handed = handOver(key, waiterId);
            if (handed.isPresent()) {
                return handed.get();
            }
        }
        String traceId = leaseTraceId(command, caller);
        LeaseStore.Call acquire = store.acquireIfFree(key.id(), command, traceId, caller);
        if (acquire.outcome() == LeaseStore.Outcome.UNCHANGED) {
            Lease active = acquire.lease();
            Instant now = acquire.now();
            if (active.activeAt(now)) {
                return new LeaseOutcome.Held(key.id(), active.owner(), active.holder(), active.expiresAt(),
                        active.remainingMillisAt(now));
            }
            // Past its TTL, not yet recorded by the sweeper: record its expiry, then the key is free, unless
            // the lease's lock-delay keeps it.
            LeaseStore.Expiry expiry = store.expire(active.id(), ACQUIRE_EXPIRY, caller);
            if (!expiry.expired()) {
                throw changedUnderLock("EXPIRE", active.id());
            }
            Expirations.afterCommit(expiredByAcquire, 1);
            if (key.watched()) {
                freed(Long.toString(key.id())); // the expired lease's watchers
            }
            if (expiry.delayedUntil() != null) {
                return delayed(key.id(), expiry.delayedUntil(), now);
            }
            if (queued) {
                Optional<LeaseOutcome> handed = handOver(key, waiterId);
                if (handed.isPresent()) {
                    return handed.get();
                }
            }
            acquire = store.acquireIfFree(key.id(), command, traceId, caller);
            if (acquire.outcome() == LeaseStore.Outcome.UNCHANGED) {
                throw changedUnderLock("lease_acquire_locked", acquire.lease().id());
            }
        }
        if (acquire.outcome() != LeaseStore.Outcome.GRANTED) {
            throw acquire.unexpected("lease_acquire_locked");
        }
        quota.afterGrant(caller.tenant()); // refused: the grant rolls back with the transaction
        return new LeaseOutcome.Granted(acquire.lease(), acquire.now());
    }

    /**
     * With the key locked: a free key goes to its queue (lease_hand_over). This request's answer: granted when it is
     * the waiting request ({@code waiterId}) whose row gets the key, else held, while the key is offered to another
     * row; empty when the key is not free or no one waits for it.
     */
    private Optional<LeaseOutcome> handOver(LeaseStore.KeyLock key, UUID waiterId) {
        return store.handOver(key.tenant(), key.id(), waiterId, notifications).map(handed -> switch (handed) {
            case LeaseStore.HandOver.Granted granted -> new LeaseOutcome.Granted(granted.lease().lease(),
                    granted.lease().now());
            case LeaseStore.HandOver.Offered offer -> {
                if (offer.made()) {
                    offered(offer.waiterId());
                }
                yield new LeaseOutcome.Held(key.id(), offer.owner(), offer.holder(), offer.until(),
                        offer.until().toEpochMilli() - offer.now().toEpochMilli());
            }
        });
    }

    /** A lease names the trace it was taken in: the client's traceId, else the request's own trace. */
    private static String leaseTraceId(AcquireCommand command, Caller caller) {
        return command.traceId() != null ? command.traceId() : caller.traceId();
    }

    private static LeaseOutcome.Delayed delayed(long keyId, Instant availableAt, Instant now) {
        return new LeaseOutcome.Delayed(keyId, availableAt, availableAt.toEpochMilli() - now.toEpochMilli());
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
        Optional<LeaseStore.Ended> ended = store.end(leaseId, LeaseState.RELEASED, fencingToken, "released", caller,
                notifications);
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
        Optional<LeaseStore.Ended> ended = store.end(leaseId, LeaseState.REVOKED, null, reason, admin, notifications);
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
        return queue.watchKeyOfLease(leaseId, tenant, seconds, watchHorizon);
    }

    /**
     * The key was offered to a waiting acquire, and the hand-over notified every instance (the waiter, and the
     * watchers of the key's last lease): a waiter of this instance is woken at once when the transaction commits,
     * without waiting for the notification's round trip.
     */
    private void offered(UUID waiterId) {
        if (!TransactionSynchronizationManager.isSynchronizationActive()) {
            waiters.offered(waiterId); // a call in autocommit: committed already
            return;
        }
        TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
            @Override
            public void afterCommit() {
                waiters.offered(waiterId);
            }
        });
    }

    /** Someone waits for these keys, just freed by this transaction: tell every instance when it commits. */
    private void freed(String keyIds) {
        if (notifications) {
            queue.notifyFreed(FreedKeys.payload(keyIds));
        }
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
    private static IllegalStateException changedUnderLock(String statement, UUID leaseId) {
        return LeaseStore.contradiction(statement, "lease " + leaseId,
                "it changed no row, though the lease allowed the change and its key was locked");
    }
}
