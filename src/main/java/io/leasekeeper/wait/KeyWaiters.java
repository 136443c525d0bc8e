package io.leasekeeper.wait;

import io.leasekeeper.config.LeasekeeperProperties;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * The requests of this instance that wait for a key: waiting acquires and watches. They hold no database
 * connection or transaction while they wait; they sleep until a notification says the key was freed
 * ({@link FreedKeysListener}), or until a time they set themselves (the holder's expiry, the end of a
 * lock-delay, their own deadline).
 *
 * <p>Invariants:
 * <ul>
 *   <li>Acquirers of a key wait in arrival order, and only the first of them (the head) tries the key when
 *       it is freed; when the head leaves (granted, deadline, gone), the next becomes head and tries at once.
 *       So on each instance the waiter that has waited longest is preferred, and no waiter starves while
 *       the key keeps being freed. Across instances the heads race for the key's row lock.</li>
 *   <li>Watchers of a key are all woken when it is freed.</li>
 *   <li>A wake-up is never lost: a waiter joins giving the time its last try began; a key freed since then
 *       (as notified) wakes it at once. A transaction that frees the key after that try commits after it,
 *       because both hold the key's row lock, so its notification comes after the try began.</li>
 *   <li>At most {@code leasekeeper.wait.max-waiters} wait at once; beyond that {@link #queue} and
 *       {@link #watch} return empty, and the request is answered as a non-waiting one.</li>
 *   <li>On shutdown every waiter is woken with {@link Wake#CLOSING} and answers before the web server's
 *       graceful shutdown waits for the requests in flight (this lifecycle's phase is later, so it stops first).</li>
 * </ul>
 */
@Component
public class KeyWaiters implements SmartLifecycle {

    /** Why {@link Waiter#await} returned. */
    public enum Wake { FREED, TIMED_OUT, CLOSING }

    /** How long a notification is remembered for a waiter that joins just after it (milliseconds apart). */
    private static final long REMEMBER_FREED_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final Map<Long, KeyQueue> keys = new ConcurrentHashMap<>();
    /** When each key was last notified free (System.nanoTime), for waiters joining right after. */
    private final Map<Long, Long> freedAt = new ConcurrentHashMap<>();
    private final AtomicInteger waiting = new AtomicInteger();
    private final AtomicInteger watching = new AtomicInteger();
    private final int maxWaiters;
    private final long fallbackPollNanos;
    private final boolean notified;
    private volatile boolean listening;
    private volatile long allFreedAt = Long.MIN_VALUE;
    private volatile boolean closing;
    private volatile boolean running;

    public KeyWaiters(LeasekeeperProperties properties, MeterRegistry registry) {
        this.maxWaiters = properties.waiting().maxWaiters();
        this.fallbackPollNanos = properties.waiting().fallbackPoll().toNanos();
        this.notified = properties.waiting().notifications();
        Gauge.builder("leasekeeper.waiters", waiting, AtomicInteger::get).tag("kind", "acquire")
                .description("Waiting acquires on this instance").register(registry);
        Gauge.builder("leasekeeper.waiters", watching, AtomicInteger::get).tag("kind", "watch")
                .description("Watches of a lease on this instance").register(registry);
    }

    /** An acquirer of the key, queued behind the others; empty at the cap or when shutting down. */
    public Optional<Waiter> queue(long keyId, long triedAtNanos) {
        return join(keyId, triedAtNanos, true);
    }

    /** A watcher of the key, woken whenever it is freed; empty at the cap or when shutting down. */
    public Optional<Waiter> watch(long keyId, long readAtNanos) {
        return join(keyId, readAtNanos, false);
    }

    /** A notification: these keys were freed. */
    void freed(long[] keyIds) {
        long now = System.nanoTime();
        for (long keyId : keyIds) {
            freedAt.put(keyId, now);
            keys.computeIfPresent(keyId, (id, queue) -> queue.wakeHeadAndWatchers());
        }
        if (freedAt.size() > 10_000) {
            freedAt.values().removeIf(at -> now - at > REMEMBER_FREED_NANOS);
        }
    }

    /** Any key may have been freed (a notification naming all, or notifications missed while reconnecting). */
    void freedAll() {
        allFreedAt = System.nanoTime();
        keys.replaceAll((id, queue) -> queue.wakeHeadAndWatchers());
    }

    /**
     * The latest time (System.nanoTime) at which a waiter tries again on its own, whatever else it waits
     * for: not within any wait while notifications arrive (a day away, which keeps nanoTime arithmetic
     * clear of overflow), {@code leasekeeper.wait.fallback-poll} from now while the listener is down (or
     * notifications are switched off).
     */
    public long retryByNanos(long nowNanos) {
        return nowNanos + (listening && notified ? TimeUnit.DAYS.toNanos(1) : fallbackPollNanos);
    }

    /**
     * The listener's state. Going down wakes every waiter, so that each sleeps again no longer than the
     * fallback poll (and tries now: a notification may have been lost with the connection).
     */
    void listening(boolean connected) {
        boolean was = listening;
        listening = connected;
        if (was && !connected) {
            freedAll();
        }
    }

    boolean listening() {
        return listening;
    }

    /** Requests waiting now, of both kinds. */
    public int count() {
        return waiting.get() + watching.get();
    }

    private Optional<Waiter> join(long keyId, long sinceNanos, boolean acquirer) {
        AtomicInteger counter = acquirer ? waiting : watching;
        if (closing || counter.incrementAndGet() + (acquirer ? watching : waiting).get() > maxWaiters) {
            counter.decrementAndGet();
            return Optional.empty();
        }
        Waiter waiter = new Waiter(keyId, acquirer);
        keys.compute(keyId, (id, queue) -> (queue == null ? new KeyQueue() : queue).add(waiter));
        Long freed = freedAt.get(keyId);
        if ((freed != null && freed - sinceNanos >= 0) || allFreedAt - sinceNanos >= 0 || closing) {
            waiter.signal.release();
        }
        return Optional.of(waiter);
    }

    private void leave(Waiter waiter) {
        keys.computeIfPresent(waiter.keyId, (id, queue) -> queue.remove(waiter));
        (waiter.acquirer ? waiting : watching).decrementAndGet();
    }

    /** The waiters of one key; changed only inside the map's compute methods, one key at a time. */
    private static final class KeyQueue {
        private final ArrayDeque<Waiter> acquirers = new ArrayDeque<>();
        private final List<Waiter> watchers = new ArrayList<>();

        KeyQueue add(Waiter waiter) {
            if (waiter.acquirer) {
                waiter.head = acquirers.isEmpty();
                acquirers.addLast(waiter);
            } else {
                watchers.add(waiter);
            }
            return this;
        }

        /** The queue without the waiter, or null when none is left; a new head tries the key at once. */
        KeyQueue remove(Waiter waiter) {
            if (waiter.acquirer) {
                acquirers.remove(waiter);
                Waiter next = acquirers.peekFirst();
                if (waiter.head && next != null) {
                    next.head = true;
                    next.signal.release();
                }
            } else {
                watchers.remove(waiter);
            }
            return acquirers.isEmpty() && watchers.isEmpty() ? null : this;
        }

        KeyQueue wakeHeadAndWatchers() {
            Waiter head = acquirers.peekFirst();
            if (head != null) {
                head.signal.release();
            }
            watchers.forEach(w -> w.signal.release());
            return this;
        }

        KeyQueue wakeAll() {
            acquirers.forEach(w -> w.signal.release());
            watchers.forEach(w -> w.signal.release());
            return this;
        }
    }

    /** One waiting request; close it when the request is answered. */
    public final class Waiter implements AutoCloseable {
        private final long keyId;
        private final boolean acquirer;
        private final Semaphore signal = new Semaphore(0);
        /** Set (under the key's entry in the map) when this acquirer becomes the first of its key. */
        private volatile boolean head;

        private Waiter(long keyId, boolean acquirer) {
            this.keyId = keyId;
            this.acquirer = acquirer;
        }

        /** An acquirer that may try the key now: the longest-waiting one of this instance. */
        public boolean isHead() {
            return head;
        }

        /**
         * Sleeps until the key is freed (as notified, or because this waiter became the head), until
         * {@code untilNanos} (System.nanoTime), or until the service shuts down.
         */
        public Wake await(long untilNanos) {
            try {
                boolean woken = signal.tryAcquire(Math.max(0, untilNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
                signal.drainPermits();
                return closing ? Wake.CLOSING : woken ? Wake.FREED : Wake.TIMED_OUT;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Wake.CLOSING;
            }
        }

        @Override
        public void close() {
            leave(this);
        }
    }

    @Override
    public void start() {
        closing = false;
        running = true;
    }

    /** Answers every waiter: each wakes with {@link Wake#CLOSING}; new waiting requests are answered at once. */
    @Override
    public void stop() {
        closing = true;
        keys.replaceAll((id, queue) -> queue.wakeAll());
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Stops before the web server's graceful shutdown (DEFAULT_PHASE - 1024) waits for requests in flight. */
    @Override
    public int getPhase() {
        return SmartLifecycle.DEFAULT_PHASE;
    }
}
