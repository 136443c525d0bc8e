package io.leasekeeper.wait;

import io.leasekeeper.config.LeasekeeperProperties;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SequencedSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * The requests of this instance that wait for a key: waiting acquires and watches. They hold no database
 * connection or transaction while they wait; they sleep until a notification says the key was freed or
 * offered to one of them ({@link FreedKeysListener}), or until a time they set themselves (the holder's
 * expiry, the end of a lock-delay, their own deadline).
 *
 * <p>The order among waiting acquires is the database's: each has a row in the key's queue
 * ({@code lease_waiter}), and the transaction that frees a key offers it to the longest-waiting row of any
 * instance and names that waiter in its notification ({@link FreedKeys}); the waiter takes it in its own
 * transaction. This class only wakes the requests concerned.
 *
 * <p>Invariants:
 * <ul>
 *   <li>A waiter named by a hand-over is woken with {@link Wake#OFFERED}, whenever the notification comes:
 *       an acquirer is registered by its id before its row is written, so a notification cannot precede it.</li>
 *   <li>A key freed without a hand-over (an expiry recorded by the sweeper, a key whose queue was empty) wakes
 *       the first acquirer of the key on this instance (the head), which tries it: a try of a free key offers
 *       it to the longest-waiting row, which may be another's. When the head leaves, the next becomes head
 *       and tries at once, unless it left holding the key. So a freed key is never left free while someone waits
 *       for it.</li>
 *   <li>Watchers of a key are all woken when it is freed.</li>
 *   <li>A wake-up is never lost: a waiter joins giving the time its last try began; a key freed since then
 *       (as notified) wakes it at once. A transaction that frees the key after that try commits after it,
 *       because both hold the key's row lock, so its notification comes after the try began.</li>
 *   <li>At most {@code leasekeeper.wait.max-waiters} wait at once, shared among the tenants that wait: a tenant
 *       alone may take them all, and when they are all taken a tenant below its share ({@code max-waiters} divided
 *       by the tenants waiting) takes the place of the newest waiter of the tenant holding the most, which wakes
 *       with {@link Wake#EVICTED} and answers 429 TENANT_BUSY; a tenant at its share is refused at once
 *       ({@link OverShare}). With {@code max-waiters} 0 nobody waits: a waiting request is answered as a
 *       non-waiting one.</li>
 *   <li>On shutdown every waiter is woken with {@link Wake#CLOSING} and answers before the web server's
 *       graceful shutdown waits for the requests in flight (this lifecycle's phase is later, so it stops first).</li>
 * </ul>
 */
@Component
public class KeyWaiters implements SmartLifecycle {

    /** Why {@link Waiter#await} returned. */
    public enum Wake { FREED, OFFERED, TIMED_OUT, CLOSING, EVICTED }

    /** The tenant holds its share of the waiter places, which are all taken: its request is answered at once. */
    public static final class OverShare extends RuntimeException {
        OverShare() {
            super("the tenant holds its share of the instance's waiter places", null, false, false);
        }
    }

    /** How long a notification is remembered for a waiter that joins just after it (milliseconds apart). */
    private static final long REMEMBER_FREED_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final Map<Long, KeyQueue> keys = new ConcurrentHashMap<>();
    /** The acquirers of this instance by id, from before their row in the database's queue is written. */
    private final Map<UUID, Waiter> acquirers = new ConcurrentHashMap<>();
    /** When each key was last notified free (System.nanoTime), for waiters joining right after. */
    private final Map<Long, Long> freedAt = new ConcurrentHashMap<>();
    private final AtomicInteger waiting = new AtomicInteger();
    private final AtomicInteger watching = new AtomicInteger();
    /** The waiters holding a place, by tenant, oldest first; guarded by this object's monitor. */
    private final Map<String, SequencedSet<Waiter>> placesByTenant = new HashMap<>();
    private int places;
    private final int maxWaiters;
    private final long fallbackPollNanos;
    private final boolean notified;
    private volatile boolean listening;
    private volatile long allFreedAt = System.nanoTime() - TimeUnit.DAYS.toNanos(365); // never yet
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

    /**
     * A waiting acquire, registered under a new id (its row's in the database's queue) before its first try;
     * it joins its key's queue here with {@link Waiter#waitFor} once a try found the key busy. Empty when waiting
     * is off or the service shuts down; throws {@link OverShare} when the tenant holds its share of a full cap.
     */
    public Optional<Waiter> acquirer(String tenant) {
        return admit(true, tenant).map(waiter -> {
            acquirers.put(waiter.id, waiter);
            return waiter;
        });
    }

    /** A watcher of the key, woken whenever it is freed; admitted as {@link #acquirer} is. */
    public Optional<Waiter> watch(String tenant, long keyId, long readAtNanos) {
        return admit(false, tenant).map(waiter -> {
            waiter.waitFor(keyId, readAtNanos);
            return waiter;
        });
    }

    /** A notification: these keys were freed, some of them offered to a waiting acquire at once. */
    void freed(List<FreedKeys.Freed> freedKeys) {
        long now = System.nanoTime();
        for (FreedKeys.Freed freed : freedKeys) {
            if (freed.offeredTo() == null) {
                freedAt.put(freed.keyId(), now);
                keys.computeIfPresent(freed.keyId(), (id, queue) -> queue.wakeHeadAndWatchers());
            } else {
                keys.computeIfPresent(freed.keyId(), (id, queue) -> queue.wakeWatchers());
                offered(freed.offeredTo());
            }
        }
        if (freedAt.size() > 10_000) {
            freedAt.values().removeIf(at -> now - at > REMEMBER_FREED_NANOS);
        }
    }

    /** A hand-over offered the key to this waiter, if it is one of this instance's (a no-op otherwise). */
    public void offered(UUID waiterId) {
        Waiter waiter = acquirers.get(waiterId);
        if (waiter != null) {
            waiter.offered = true;
            waiter.signal.release();
        }
    }

    /**
     * Any key may have been freed or handed over (a notification naming all, or notifications missed while
     * reconnecting): every waiter looks again.
     */
    void freedAll() {
        allFreedAt = System.nanoTime();
        keys.replaceAll((id, queue) -> queue.wakeAll());
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

    private synchronized Optional<Waiter> admit(boolean acquirer, String tenant) {
        if (closing || maxWaiters == 0) {
            return Optional.empty();
        }
        SequencedSet<Waiter> mine = placesByTenant.get(tenant);
        if (places >= maxWaiters) {
            int share = Math.max(1, maxWaiters / (placesByTenant.size() + (mine == null ? 1 : 0)));
            SequencedSet<Waiter> most = null;
            for (SequencedSet<Waiter> theirs : placesByTenant.values()) {
                if (most == null || theirs.size() > most.size()) {
                    most = theirs;
                }
            }
            if ((mine != null && mine.size() >= share) || most == null || most.size() <= share) {
                throw new OverShare();
            }
            Waiter newest = most.getLast();
            givePlaceUp(newest);
            newest.evicted = true;
            newest.signal.release();
        }
        Waiter waiter = new Waiter(acquirer, tenant);
        placesByTenant.computeIfAbsent(tenant, t -> new LinkedHashSet<>()).add(waiter);
        places++;
        (acquirer ? waiting : watching).incrementAndGet();
        return Optional.of(waiter);
    }

    /** The waiter's place is free for another (at most once: when it was evicted, or when it leaves). */
    private synchronized void givePlaceUp(Waiter waiter) {
        SequencedSet<Waiter> theirs = placesByTenant.get(waiter.tenant);
        if (theirs != null && theirs.remove(waiter)) {
            places--;
            if (theirs.isEmpty()) {
                placesByTenant.remove(waiter.tenant);
            }
        }
    }

    private void leave(Waiter waiter) {
        givePlaceUp(waiter);
        if (waiter.keyId != NO_KEY) {
            keys.computeIfPresent(waiter.keyId, (id, queue) -> queue.remove(waiter));
        }
        if (waiter.acquirer) {
            acquirers.remove(waiter.id);
        }
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

        /** The queue without the waiter, or null when none is left; a new head tries at once unless the key was taken. */
        KeyQueue remove(Waiter waiter) {
            if (waiter.acquirer) {
                acquirers.remove(waiter);
                Waiter next = acquirers.peekFirst();
                if (waiter.head && next != null) {
                    next.head = true;
                    if (!waiter.tookKey) {
                        next.signal.release(); // the key may be free and no one of this instance would try it
                    }
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
            return wakeWatchers();
        }

        KeyQueue wakeWatchers() {
            watchers.forEach(w -> w.signal.release());
            return this;
        }

        KeyQueue wakeAll() {
            acquirers.forEach(w -> w.signal.release());
            watchers.forEach(w -> w.signal.release());
            return this;
        }
    }

    private static final long NO_KEY = Long.MIN_VALUE;

    /** One waiting request; close it when the request is answered. */
    public final class Waiter implements AutoCloseable {
        private final UUID id = UUID.randomUUID();
        private final boolean acquirer;
        private final String tenant;
        private final Semaphore signal = new Semaphore(0);
        private volatile long keyId = NO_KEY;
        /** Set (under the key's entry in the map) when this acquirer becomes the first of its key. */
        private volatile boolean head;
        /** Set when a hand-over named this acquirer; cleared by the wake that reports it. */
        private volatile boolean offered;
        /** Set when this acquirer leaves holding the key: its successor need not try it. */
        private volatile boolean tookKey;
        /** Set when another tenant's waiter took this one's place: it answers at once. */
        private volatile boolean evicted;

        private Waiter(boolean acquirer, String tenant) {
            this.acquirer = acquirer;
            this.tenant = tenant;
        }

        /**
         * This acquirer was granted the key and leaves: the next of the instance becomes head without trying at
         * once (the key is held; the next release offers it to the queue). An acquirer that leaves without the key
         * makes its successor try, since the key may have been freed with no one of this instance trying it.
         */
        public void tookKey() {
            tookKey = true;
        }

        /** The id of this acquirer's row in the database's queue of its key. */
        public UUID id() {
            return id;
        }

        /**
         * Joins the key's queue on this instance, once: {@code sinceNanos} is when the try that found the key
         * busy began; a key notified free since then wakes this waiter at once.
         */
        public void waitFor(long key, long sinceNanos) {
            if (keyId != NO_KEY) {
                return;
            }
            keyId = key;
            keys.compute(key, (id, queue) -> (queue == null ? new KeyQueue() : queue).add(this));
            Long freed = freedAt.get(key);
            if ((freed != null && freed - sinceNanos >= 0) || allFreedAt - sinceNanos >= 0 || closing) {
                signal.release();
            }
        }

        /** An acquirer that may try the key now: the longest-waiting one of this instance. */
        public boolean isHead() {
            return head;
        }

        /**
         * Sleeps until the key is freed (as notified, or because this waiter became the head), until
         * {@code untilNanos} (System.nanoTime), until another tenant's waiter takes its place, or until the service
         * shuts down.
         */
        public Wake await(long untilNanos) {
            try {
                boolean woken = signal.tryAcquire(Math.max(0, untilNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
                signal.drainPermits();
                if (offered) {
                    offered = false; // reported once: a try that then finds the offer lapsed sleeps again
                    return Wake.OFFERED;
                }
                return closing ? Wake.CLOSING : evicted ? Wake.EVICTED
                        : woken ? Wake.FREED : Wake.TIMED_OUT;
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
        acquirers.values().forEach(waiter -> waiter.signal.release());
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
