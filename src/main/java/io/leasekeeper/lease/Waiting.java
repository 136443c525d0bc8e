package io.leasekeeper.lease;

import io.leasekeeper.idempotency.IdempotencyStore;
import io.leasekeeper.limits.TenantSlots;
import io.leasekeeper.security.Caller;
import io.leasekeeper.wait.KeyWaiters;
import io.leasekeeper.web.ApiException;
import io.leasekeeper.web.ErrorCode;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.springframework.stereotype.Component;

/**
 * Acquires, waiting or not, and watches. A waiting request holds no database connection or transaction while it
 * waits: each try is one call of its own (lease_acquire, naming which try it is), and between tries the request's
 * (virtual) thread sleeps in {@link KeyWaiters} until the key is handed to it or freed, a time it chose passes
 * (the holder's expiry, the end of a lock-delay, the fallback poll while notifications may be lost), or its
 * deadline.
 * Times are measured on this JVM's monotonic clock from the database's answers ({@code remainingMs}), never
 * by comparing clocks. At the deadline an acquire tries once more and answers as a 1.0 acquire would.
 */
@Component
class Waiting {

    /** A try that took the key: granted now, or the grant an Idempotency-Key replayed. */
    private static boolean granted(LeaseOutcome tried) {
        return tried instanceof LeaseOutcome.Granted || tried instanceof LeaseOutcome.Replayed;
    }

    private final KeyWaiters waiters;
    private final LeaseReads reads;
    private final LeaseOperations operations;
    private final IdempotentCalls idempotent;
    private final Meter.MeterProvider<Timer> waited;

    Waiting(KeyWaiters waiters, LeaseReads reads, LeaseOperations operations, IdempotentCalls idempotent,
            MeterRegistry registry) {
        this.waiters = waiters;
        this.reads = reads;
        this.operations = operations;
        this.idempotent = idempotent;
        this.waited = Timer.builder("leasekeeper.wait")
                .description("How long waiting requests waited, by kind (acquire, watch) and how they ended")
                .publishPercentileHistogram().maximumExpectedValue(Duration.ofSeconds(60))
                .withRegistry(registry);
    }

    /**
     * How often a waiting acquire looks at its client between wake-ups: one that has gone leaves the key's
     * queue within this long, so that later hand-overs skip it.
     */
    private static final long CLIENT_CHECK_NANOS = TimeUnit.SECONDS.toNanos(1);

    /**
     * An acquire, each try one call under the request's Idempotency-Key (a waiting acquire holds
     * nothing between tries). With {@code waitSeconds} 0 it tries once. Else it tries the key; while it is busy, the request's row waits in the key's queue in the database, and the
     * request sleeps until a transaction offers the key to that row, or the key may be free (this request is
     * the longest-waiting one of the instance, and the key was freed without a hand-over or its holder's
     * expiry passed), until {@code arrivedNanos + waitSeconds}. At least every second, and before each try (which may
     * grant it the key), it looks at its client's connection: one that has gone leaves the queue, declining the key
     * if it was offered to it, which then goes to the next in the queue.
     */
    LeaseOutcome acquire(AcquireCommand command, Caller caller, IdempotencyStore.Request idempotency,
                         long arrivedNanos, BooleanSupplier clientGone) {
        Attempt attempt = operation -> idempotent.run(idempotency, caller, operation);
        if (command.waitSeconds() == 0) {
            return attempt.run(() -> operations.acquire(command, caller, LeaseStore.Try.ONCE, null, null));
        }
        long deadline = arrivedNanos + TimeUnit.SECONDS.toNanos(command.waitSeconds());
        Optional<KeyWaiters.Waiter> admitted = admit(() -> waiters.acquirer(caller.tenant()));
        if (admitted.isEmpty()) { // waiting off, or shutting down: answered as a non-waiting acquire
            return attempt.run(() -> operations.acquire(command, caller, LeaseStore.Try.ONCE, null, null));
        }
        try (KeyWaiters.Waiter waiter = admitted.get()) {
            UUID id = waiter.id();
            long triedAt = System.nanoTime();
            LeaseOutcome tried = attempt.run(() -> operations.acquire(command, caller, LeaseStore.Try.FIRST, id,
                    idempotency));
            if (granted(tried)) {
                waiter.tookKey();
                return tried;
            }
            if (!(tried instanceof LeaseOutcome.Busy busy)) {
                return tried; // refused
            }
            waiter.waitFor(busy.keyId(), triedAt);
            try {
                return waitQueued(waiter, busy, triedAt, deadline, command, caller, arrivedNanos,
                        attempt, clientGone);
            } catch (RuntimeException failed) {
                // The request fails (the database went away): its row should not be offered the key later.
                try {
                    operations.abandonQueue(id, caller);
                } catch (RuntimeException alsoFailed) {
                    failed.addSuppressed(alsoFailed);
                }
                throw failed;
            }
        }
    }

    /** One try of an acquire, one call under the request's Idempotency-Key. */
    private interface Attempt {
        LeaseOutcome run(Supplier<LeaseOutcome> operation);
    }

    private LeaseOutcome waitQueued(KeyWaiters.Waiter waiter, LeaseOutcome.Busy first, long firstTriedAt,
                                    long deadline, AcquireCommand command, Caller caller, long arrivedNanos,
                                    Attempt attempt, BooleanSupplier clientGone) {
        UUID id = waiter.id();
        LeaseOutcome.Busy tried = first;
        long triedAt = firstTriedAt;
        while (true) {
            long now = System.nanoTime();
            long tryAt = earliest(deadline, waiters.retryByNanos(now));
            if (waiter.isHead()) {
                tryAt = earliest(tryAt, triedAt + TimeUnit.MILLISECONDS.toNanos(tried.remainingMs()));
            }
            KeyWaiters.Wake wake = sleep(waiter, tryAt, clientGone);
            if (wake == null) {
                // Never grant a key to a client that has gone: the key goes to the next in the queue.
                operations.abandonQueue(id, caller);
                record("acquire", "gone", arrivedNanos);
                return tried;
            }
            boolean evicted = wake == KeyWaiters.Wake.EVICTED;
            if (wake == KeyWaiters.Wake.CLOSING || evicted || System.nanoTime() - deadline >= 0) {
                LeaseOutcome last = attempt.run(() -> operations.acquire(command, caller, LeaseStore.Try.LAST, id,
                        null));
                if (granted(last)) {
                    waiter.tookKey();
                }
                record("acquire", granted(last) ? "granted" : evicted ? "evicted"
                        : wake == KeyWaiters.Wake.CLOSING ? "shutdown" : "deadline", arrivedNanos);
                if (evicted && !granted(last)) {
                    throw tenantBusy(); // a refusal: nothing is remembered under an Idempotency-Key
                }
                return last;
            }
            triedAt = System.nanoTime();
            LeaseOutcome next = attempt.run(() -> operations.acquire(command, caller, LeaseStore.Try.AGAIN, id, null));
            if (granted(next)) {
                waiter.tookKey();
                record("acquire", "granted", arrivedNanos);
                return next;
            }
            if (!(next instanceof LeaseOutcome.Busy busy)) {
                return next; // refused
            }
            tried = busy;
        }
    }

    /**
     * Answers the lease once it is no longer active (released, revoked, expired by time), or as it is when
     * {@code waitSeconds} pass; a renew does not end the wait.
     */
    LeaseView watch(UUID leaseId, Caller caller, int waitSeconds, long arrivedNanos, LeaseRead first,
                    BooleanSupplier clientGone) {
        long deadline = arrivedNanos + TimeUnit.SECONDS.toNanos(waitSeconds);
        Optional<Long> keyId = operations.watchKeyOfLease(leaseId, caller.tenant(), waitSeconds + 1);
        Optional<KeyWaiters.Waiter> joined = keyId.isEmpty() ? Optional.empty()
                : admit(() -> waiters.watch(caller.tenant(), keyId.get(), arrivedNanos));
        if (joined.isEmpty()) {
            return LeaseView.of(first.lease(), first.now());
        }
        try (KeyWaiters.Waiter waiter = joined.get()) {
            while (true) {
                long readAt = System.nanoTime();
                LeaseRead read = reads.byId(leaseId, caller.tenant()).orElse(first);
                Lease lease = read.lease();
                if (!lease.activeAt(read.now())) {
                    record("watch", "ended", arrivedNanos);
                    return LeaseView.of(lease, read.now());
                }
                long now = System.nanoTime();
                if (now - deadline >= 0) {
                    record("watch", "deadline", arrivedNanos);
                    return LeaseView.of(lease, read.now());
                }
                long readAgainAt = earliest(earliest(deadline, waiters.retryByNanos(now)),
                        readAt + TimeUnit.MILLISECONDS.toNanos(lease.remainingMillisAt(read.now())));
                KeyWaiters.Wake wake = sleep(waiter, readAgainAt, clientGone);
                if (wake == null) {
                    // Nobody will read the answer: the place goes back to the instance now, not at the deadline.
                    record("watch", "gone", arrivedNanos);
                    return LeaseView.of(lease, read.now());
                }
                if (wake == KeyWaiters.Wake.EVICTED) {
                    record("watch", "evicted", arrivedNanos);
                    throw tenantBusy();
                }
                if (wake == KeyWaiters.Wake.CLOSING) {
                    LeaseRead last = reads.byId(leaseId, caller.tenant()).orElse(read);
                    record("watch", "shutdown", arrivedNanos);
                    return LeaseView.of(last.lease(), last.now());
                }
            }
        }
    }

    /**
     * Sleeps until the waiter is woken or {@code untilNanos}, looking at the client at least every second meanwhile
     * (a waiter whose client has gone leaves its place, and its key's queue, within about that) and once more
     * before it goes on: the wake, or null when the client has gone. Without the request's slot
     * ({@link TenantSlots}): a waiter holds nothing while it sleeps, and takes a slot back only to go on.
     */
    private static KeyWaiters.Wake sleep(KeyWaiters.Waiter waiter, long untilNanos, BooleanSupplier clientGone) {
        return TenantSlots.aside(() -> {
            while (true) {
                KeyWaiters.Wake wake = waiter.await(earliest(untilNanos, System.nanoTime() + CLIENT_CHECK_NANOS));
                if (clientGone.getAsBoolean()) {
                    return null;
                }
                if (wake != KeyWaiters.Wake.TIMED_OUT || System.nanoTime() - untilNanos >= 0) {
                    return wake;
                }
            }
        });
    }

    private static long earliest(long a, long b) {
        return b - a < 0 ? b : a;
    }

    /** A place among the instance's waiters; a tenant holding its share of a full cap is answered at once. */
    private static Optional<KeyWaiters.Waiter> admit(Supplier<Optional<KeyWaiters.Waiter>> admission) {
        try {
            return admission.get();
        } catch (KeyWaiters.OverShare e) {
            throw tenantBusy();
        }
    }

    private static ApiException tenantBusy() {
        return new ApiException(ErrorCode.TENANT_BUSY, "The instance keeps as many waiting requests as it may and the"
                + " tenant holds its share of them; retry after 1 s.", 1);
    }

    private void record(String kind, String outcome, long arrivedNanos) {
        waited.withTags("kind", kind, "outcome", outcome).record(System.nanoTime() - arrivedNanos, TimeUnit.NANOSECONDS);
    }
}
