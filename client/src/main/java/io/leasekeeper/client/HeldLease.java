package io.leasekeeper.client;

import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A lease the application holds: the holder's half of the lease's safety.
 *
 * <ul>
 *   <li><b>Renewed while held,</b> every {@code renewFraction} of the TTL; a renew that fails for a transient
 *       reason (503, 429 TENANT_BUSY, a lost connection, a timeout) is retried with the same Idempotency-Key
 *       until the local deadline; after a TENANT_BUSY, no sooner than its {@code Retry-After}.</li>
 *   <li><b>A local deadline</b> on this JVM's monotonic clock: the last successful acquire's or renew's
 *       {@code remainingMs}, counted from when its request was sent (from when its answer arrived, for an acquire
 *       that waited), less a margin. The client never compares its wall clock with the service's. At the deadline
 *       the lease counts as lost, even when the network is silent.</li>
 *   <li><b>Watched</b> (revision 1.1): a revoke or an expiry is known within a second.</li>
 *   <li><b>Loss</b> completes {@link #lost()} once, with why: a renew answered 404, 403, 409 or 410, the watch
 *       saw the lease end, or the local deadline passed. Renewal and watching stop then.</li>
 *   <li>{@link #checkValid()} fences each protected step; {@link #fencingToken()} goes to the stores written.</li>
 *   <li>{@link #close()} releases by compare-and-delete, once; after a loss it releases nothing (the key may be
 *       a successor's).</li>
 * </ul>
 *
 * <p><b>Why the local deadline is never later than the service's expiry.</b> The service measures
 * {@code remainingMs} when it answers. A request is sent before that, so {@code sentAt + remainingMs} is early by
 * the round trip, whatever the margin: acquires without a wait and renews count from their send. A waiting
 * acquire cannot: the grant may come at any time in its wait, so from its send a lease granted after a wait longer
 * than the TTL less the margin would be lost the moment it was granted. It counts from its answer's arrival,
 * which is after the service measured, by the answer's one-way delay (its transit and this JVM's reading it, a
 * pause included): {@code receivedAt + remainingMs} can be that much later than the expiry, and the margin must
 * cover it. The default 1 s does by far on any network a lease is used across; a margin of 0 does not. (The two
 * monotonic clocks' rates differ by parts per million, a few microseconds over a TTL, also within the margin.)
 */
public final class HeldLease implements AutoCloseable {

    /** Why a held lease was lost. */
    public enum Loss { REVOKED, EXPIRED, RELEASED, NOT_FOUND, NOT_OWNER, TOKEN_MISMATCH, LOCAL_DEADLINE }

    /** The longest watch asked of the service (the contract's default cap); halved when the service's is lower. */
    private static final int WATCH_SECONDS = 30;

    private final LeasekeeperClient client;
    private final Lease lease;
    private final long marginNanos;
    private final long renewEveryNanos;
    private final ScheduledExecutorService scheduler;
    private final Thread watcher;
    private final CompletableFuture<Loss> lost = new CompletableFuture<>();
    private volatile long deadlineNanos;
    private volatile boolean closed;

    /** {@code countsFromNanos}: when, on {@link System#nanoTime()}, the grant's {@code remainingMs} counts from. */
    HeldLease(LeasekeeperClient client, Lease lease, long countsFromNanos, HoldOptions options) {
        this.client = client;
        this.lease = lease;
        long ttlNanos = TimeUnit.SECONDS.toNanos(lease.ttlSeconds());
        this.marginNanos = Math.min(options.margin().toNanos(), ttlNanos / 3);
        this.renewEveryNanos = (long) (ttlNanos * options.renewFraction());
        this.deadlineNanos = countsFromNanos + TimeUnit.MILLISECONDS.toNanos(lease.remainingMs()) - marginNanos;
        this.scheduler = Executors.newScheduledThreadPool(2, task -> {
            Thread thread = new Thread(task, "leasekeeper-held-" + lease.leaseId());
            thread.setDaemon(true);
            return thread;
        });
        scheduler.schedule(() -> renew(UUID.randomUUID().toString(), 1),
                countsFromNanos + renewEveryNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
        scheduler.schedule(this::checkDeadline, deadlineNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
        if (options.watch()) {
            watcher = new Thread(this::watch, "leasekeeper-watch-" + lease.leaseId());
            watcher.setDaemon(true);
            watcher.start();
        } else {
            watcher = null;
        }
    }

    public UUID leaseId() {
        return lease.leaseId();
    }

    /** The canonical key string. */
    public String key() {
        return lease.key();
    }

    /** The token every protected write passes to its store, which refuses a smaller one. */
    public long fencingToken() {
        return lease.fencingToken();
    }

    /** The lease as it was granted. */
    public Lease lease() {
        return lease;
    }

    /** Completes, once, when the lease is lost; never after a {@link #close()} of a lease still held. */
    public CompletionStage<Loss> lost() {
        return lost.minimalCompletionStage();
    }

    /**
     * Throws {@link LeaseLostException} unless the lease is still held by this holder as far as it can know:
     * not lost, and its local deadline not passed. Call it before each protected step.
     */
    public void checkValid() {
        if (closed && !lost.isDone()) {
            throw new IllegalStateException("lease on " + key() + " was released by this holder");
        }
        if (System.nanoTime() - deadlineNanos >= 0) {
            lose(Loss.LOCAL_DEADLINE);
        }
        Loss loss = lost.getNow(null);
        if (loss != null) {
            throw new LeaseLostException(loss, key());
        }
    }

    /** Stops renewing and watching, and releases the lease unless it was lost; a second call does nothing. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        scheduler.shutdownNow();
        if (watcher != null) {
            watcher.interrupt();
        }
        if (lost.isDone() || System.nanoTime() - deadlineNanos >= 0) {
            return; // not this holder's any more, or not known to be: release nothing
        }
        try {
            client.release(lease.leaseId(), lease.fencingToken());
        } catch (ProblemException | ServiceUnavailableException e) {
            // not released: it ends by its TTL, as a holder that died would leave it
        }
    }

    private void renew(String idempotencyKey, int attempt) {
        if (closed || lost.isDone()) {
            return;
        }
        long sentAt = System.nanoTime();
        try {
            Lease renewed = client.renew(lease.leaseId(), lease.fencingToken(), null, idempotencyKey, 1);
            deadlineNanos = Math.max(deadlineNanos,
                    sentAt + TimeUnit.MILLISECONDS.toNanos(renewed.remainingMs()) - marginNanos);
            client.tell(l -> l.renewed(this));
            scheduler.schedule(() -> renew(UUID.randomUUID().toString(), 1),
                    sentAt + renewEveryNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
        } catch (ProblemException.LeaseGone gone) {
            lose(lossOf(gone));
        } catch (ProblemException | ServiceUnavailableException transientFailure) {
            client.tell(l -> l.renewFailed(this, transientFailure));
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                lose(Loss.LOCAL_DEADLINE);
                return;
            }
            long jitter = TimeUnit.MILLISECONDS.toNanos(
                    ThreadLocalRandom.current().nextLong(Math.min(2_000, 100L << Math.min(attempt, 10)) + 1));
            long least = retryAfterNanos(transientFailure);
            if (least >= left) {
                return; // no renew both after Retry-After and in time: the deadline loses the lease (checkDeadline)
            }
            long backoff = Math.min(left, Math.max(jitter, least));
            if (!scheduler.isShutdown()) {
                scheduler.schedule(() -> renew(idempotencyKey, attempt + 1), backoff, TimeUnit.NANOSECONDS);
            }
        }
    }

    /**
     * The least pause before retrying a renew: a TENANT_BUSY's Retry-After, as the instance is busy with this
     * tenant's requests and a sooner renew would add to them; else 0. A 503's Retry-After is the service's guess
     * at the database's return, and a renew that may still succeed before the deadline is worth sending sooner.
     */
    private static long retryAfterNanos(RuntimeException failure) {
        if (failure instanceof ProblemException.TenantBusy busy && busy.problem().retryAfter() != null) {
            return busy.problem().retryAfter().toNanos();
        }
        return 0;
    }

    private void checkDeadline() {
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0) {
            lose(Loss.LOCAL_DEADLINE);
        } else if (!scheduler.isShutdown()) {
            scheduler.schedule(this::checkDeadline, left, TimeUnit.NANOSECONDS);
        }
    }

    private void watch() {
        int seconds = WATCH_SECONDS;
        while (!closed && !lost.isDone()) {
            try {
                Lease now = client.watch(lease.leaseId(), seconds);
                if (!now.active() && !closed) {
                    lose(lossOf(now.state()));
                }
            } catch (ProblemException.ValidationFailed tooLong) {
                seconds = Math.max(1, seconds / 2); // the service's leasekeeper.wait.max is lower
            } catch (ProblemException.LeaseGone gone) {
                if (!closed) {
                    lose(lossOf(gone));
                }
            } catch (RuntimeException e) {
                if (Thread.currentThread().isInterrupted()) {
                    return;
                }
                try {
                    Thread.sleep(1_000); // the renewal and the deadline keep the lease safe meanwhile
                } catch (InterruptedException interrupted) {
                    return;
                }
            }
        }
    }

    private void lose(Loss loss) {
        if (lost.complete(loss)) {
            client.tell(l -> l.lost(this, loss));
            scheduler.shutdownNow();
            if (watcher != null && Thread.currentThread() != watcher) {
                watcher.interrupt();
            }
        }
    }

    private static Loss lossOf(ProblemException.LeaseGone gone) {
        if (gone instanceof ProblemException.LeaseRevoked) {
            return Loss.REVOKED;
        } else if (gone instanceof ProblemException.LeaseExpired) {
            return Loss.EXPIRED;
        } else if (gone instanceof ProblemException.LeaseReleased) {
            return Loss.RELEASED;
        } else if (gone instanceof ProblemException.NotLeaseOwner) {
            return Loss.NOT_OWNER;
        } else if (gone instanceof ProblemException.FencingTokenMismatch) {
            return Loss.TOKEN_MISMATCH;
        }
        return Loss.NOT_FOUND;
    }

    private static Loss lossOf(String state) {
        switch (state) {
            case "revoked":
                return Loss.REVOKED;
            case "released":
                return Loss.RELEASED;
            default:
                return Loss.EXPIRED;
        }
    }
}
