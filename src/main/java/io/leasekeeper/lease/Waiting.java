package io.leasekeeper.lease;

import io.leasekeeper.security.Caller;
import io.leasekeeper.wait.KeyWaiters;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Component;

/**
 * Waiting acquires and watches (contract 1.1). A waiting request holds no database connection or
 * transaction while it waits: each try is a short transaction of its own, and between tries the request's
 * (virtual) thread sleeps in {@link KeyWaiters} until the key is freed, a time it chose passes (the holder's
 * expiry, the end of a lock-delay, the fallback poll while notifications may be lost), or its deadline.
 * Times are measured on this JVM's monotonic clock from the database's answers ({@code remainingMs}), never
 * by comparing clocks. At the deadline an acquire tries once more and answers as a 1.0 acquire would.
 */
@Component
class Waiting {

    /** One try of an acquire: its answer, and what it found (null when an Idempotency-Key replayed a grant). */
    record Try(ResponseEntity<?> answer, AcquireResult result) {

        boolean granted() {
            return result == null || result instanceof AcquireResult.Granted;
        }

        AcquireResult.Busy busy() {
            return (AcquireResult.Busy) result;
        }
    }

    private final KeyWaiters waiters;
    private final LeaseStore store;
    private final LeaseOperations operations;
    private final Meter.MeterProvider<Timer> waited;

    Waiting(KeyWaiters waiters, LeaseStore store, LeaseOperations operations, MeterRegistry registry) {
        this.waiters = waiters;
        this.store = store;
        this.operations = operations;
        this.waited = Timer.builder("leasekeeper.wait")
                .description("How long waiting requests waited, by kind (acquire, watch) and how they ended")
                .publishPercentileHistogram().maximumExpectedValue(Duration.ofSeconds(60))
                .withRegistry(registry);
    }

    /**
     * Tries the key; while it is busy, waits in this instance's queue for it and tries again whenever this
     * request is the longest-waiting one of the instance and the key may be free, until
     * {@code arrivedNanos + waitSeconds}. Before each try it asks whether the client is still there, and
     * leaves the queue without trying when it has gone.
     */
    ResponseEntity<?> acquire(int waitSeconds, long arrivedNanos, Supplier<Try> tryAcquire, BooleanSupplier clientGone) {
        long deadline = arrivedNanos + TimeUnit.SECONDS.toNanos(waitSeconds);
        long triedAt = System.nanoTime();
        Try tried = tryAcquire.get();
        if (tried.granted()) {
            return tried.answer();
        }
        Optional<KeyWaiters.Waiter> joined = waiters.queue(tried.busy().keyId(), triedAt);
        if (joined.isEmpty()) {
            return tried.answer(); // at the cap, or shutting down: answered as a non-waiting acquire
        }
        try (KeyWaiters.Waiter waiter = joined.get()) {
            while (true) {
                long until = deadline;
                if (waiter.isHead()) {
                    until = earliest(until, triedAt + TimeUnit.MILLISECONDS.toNanos(tried.busy().remainingMs()),
                            waiters.retryByNanos(System.nanoTime()));
                }
                KeyWaiters.Wake wake = waiter.await(until);
                if ((waiter.isHead() || wake == KeyWaiters.Wake.TIMED_OUT) && clientGone.getAsBoolean()) {
                    // Never grant a key to a client that has gone: it would hold the key until its TTL.
                    record("acquire", "gone", arrivedNanos);
                    return tried.answer();
                }
                if (wake == KeyWaiters.Wake.CLOSING || System.nanoTime() - deadline >= 0) {
                    Try last = tryAcquire.get();
                    record("acquire", last.granted() ? "granted" : wake == KeyWaiters.Wake.CLOSING ? "shutdown"
                            : "deadline", arrivedNanos);
                    return last.answer();
                }
                if (!waiter.isHead()) {
                    continue;
                }
                triedAt = System.nanoTime();
                tried = tryAcquire.get();
                if (tried.granted()) {
                    record("acquire", "granted", arrivedNanos);
                    return tried.answer();
                }
            }
        }
    }

    /**
     * Answers the lease once it is no longer active (released, revoked, expired by time), or as it is when
     * {@code waitSeconds} pass; a renew does not end the wait.
     */
    LeaseView watch(UUID leaseId, Caller caller, int waitSeconds, long arrivedNanos, LeaseStore.AtTime first) {
        long deadline = arrivedNanos + TimeUnit.SECONDS.toNanos(waitSeconds);
        Optional<Long> keyId = operations.watchKeyOfLease(leaseId, caller.tenant(), waitSeconds + 1);
        Optional<KeyWaiters.Waiter> joined = keyId.flatMap(id -> waiters.watch(id, arrivedNanos));
        if (joined.isEmpty()) {
            return LeaseView.of(first.lease(), first.now());
        }
        try (KeyWaiters.Waiter waiter = joined.get()) {
            while (true) {
                long readAt = System.nanoTime();
                LeaseStore.AtTime read = store.byId(leaseId, caller.tenant()).orElse(first);
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
                long expiry = readAt + TimeUnit.MILLISECONDS.toNanos(lease.remainingMillisAt(read.now()));
                if (waiter.await(earliest(deadline, expiry, waiters.retryByNanos(now))) == KeyWaiters.Wake.CLOSING) {
                    LeaseStore.AtTime last = store.byId(leaseId, caller.tenant()).orElse(read);
                    record("watch", "shutdown", arrivedNanos);
                    return LeaseView.of(last.lease(), last.now());
                }
            }
        }
    }

    private static long earliest(long a, long b, long c) {
        long first = b - a < 0 ? b : a;
        return c - first < 0 ? c : first;
    }

    private void record(String kind, String outcome, long arrivedNanos) {
        waited.withTags("kind", kind, "outcome", outcome).record(System.nanoTime() - arrivedNanos, TimeUnit.NANOSECONDS);
    }
}
