package io.leasekeeper.limits;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The request slots of one instance, shared among the tenants that ask for them: work-conserving max-min fairness
 * (fair queuing over tenants, each request one unit of work).
 *
 * <p>Invariants, all kept under {@link #lock}:
 * <ul>
 *   <li>At most {@code slots} requests hold a slot at once ({@code inUse <= slots}), but for the moment after
 *       {@link #resize} shrank them: then no slot is handed out until enough came back.</li>
 *   <li>A request queues only while every slot is taken, and a slot that comes free while anyone queues is handed
 *       to a queued request at once: the instance never idles while a tenant waits (work-conserving), and a tenant
 *       alone may hold every slot.</li>
 *   <li>A freed slot goes to the queued tenant holding the fewest slots, the longest-waiting request first among
 *       equals: competing tenants converge on equal shares, whatever their number of clients, and a tenant's
 *       excess waits in its own queue, never ahead of another tenant's requests.</li>
 *   <li>A tenant queues at most {@code maxQueuedPerTenant} requests; a request beyond it, or one that waited
 *       {@code timeout} without a slot, is refused ({@link Refused}) and holds nothing.</li>
 *   <li>Only tenants with a slot or a queued request are remembered: the state is bounded by the requests in
 *       flight, not by the number of tenants.</li>
 * </ul>
 * Kubernetes' API Priority and Fairness shares a server the same way (fair queuing over flows, seats instead of
 * slots); the decision record says why no library's limiter fits.
 */
final class FairSlots {

    /** Why a request got no slot. */
    enum Refused { QUEUE_FULL, WAITED_TOO_LONG }

    /** A request refused a slot: it holds nothing. */
    static final class RefusedException extends Exception {
        private final Refused reason;

        RefusedException(Refused reason) {
            super(reason.name(), null, false, false);
            this.reason = reason;
        }

        Refused reason() {
            return reason;
        }
    }

    private static final class Tenant {
        int held;
        final ArrayDeque<Ticket> queue = new ArrayDeque<>();
    }

    private static final class Ticket {
        final long serial;
        final Condition handed;
        boolean granted;

        Ticket(long serial, Condition handed) {
            this.serial = serial;
            this.handed = handed;
        }
    }

    private int slots;
    private final int maxQueuedPerTenant;
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<String, Tenant> tenants = new HashMap<>();
    /** The tenants with a queued request, in the order they began to queue. */
    private final Set<Tenant> queueing = new LinkedHashSet<>();
    private int inUse;
    private int queued;
    private long serials;

    FairSlots(int slots, int maxQueuedPerTenant) {
        if (slots < 1 || maxQueuedPerTenant < 0) {
            throw new IllegalArgumentException("slots must be at least 1 and the queue not negative");
        }
        this.slots = slots;
        this.maxQueuedPerTenant = maxQueuedPerTenant;
    }

    int slots() {
        lock.lock();
        try {
            return slots;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Changes how many requests may hold a slot at once. More slots are handed to queued requests at once, fairly;
     * fewer take effect as slots come back (no request loses the slot it holds).
     */
    void resize(int slots) {
        if (slots < 1) {
            throw new IllegalArgumentException("slots must be at least 1");
        }
        lock.lock();
        try {
            this.slots = slots;
            while (inUse < slots && handToNext()) {
                // each turn hands one freed slot to the queued tenant holding the fewest
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes a slot for one of the tenant's requests: at once while one is free, else after waiting in the tenant's
     * queue at most {@code timeoutNanos}. Give it back with {@link #release}.
     *
     * @return the slots held once it has one, its own included
     */
    int take(String tenant, long timeoutNanos) throws RefusedException {
        lock.lock();
        try {
            Tenant t = tenants.computeIfAbsent(tenant, name -> new Tenant());
            if (inUse < slots) { // a free slot: nobody queues (a freed slot is handed over)
                t.held++;
                return ++inUse;
            }
            if (t.queue.size() >= maxQueuedPerTenant) {
                forgetIfIdle(tenant, t);
                throw new RefusedException(Refused.QUEUE_FULL);
            }
            Ticket ticket = enqueue(t, false);
            long left = timeoutNanos;
            while (!ticket.granted) {
                if (left <= 0) {
                    dequeue(tenant, t, ticket);
                    throw new RefusedException(Refused.WAITED_TOO_LONG);
                }
                try {
                    left = ticket.handed.awaitNanos(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt(); // the instance is stopping
                    if (!ticket.granted) {
                        dequeue(tenant, t, ticket);
                        throw new RefusedException(Refused.WAITED_TOO_LONG);
                    }
                }
            }
            return inUse;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes a slot back for a request that gave its slot up to wait (for a key, a lease's end): it queues first
     * in its tenant's queue, past the queue's bound and without a timeout (the slots' holders end within their
     * statements' timeouts), since refusing it now would turn a grant it may already have into an error.
     *
     * @return the slots held once it has one, its own included
     */
    int takeBack(String tenant) {
        lock.lock();
        try {
            Tenant t = tenants.computeIfAbsent(tenant, name -> new Tenant());
            if (inUse < slots) {
                t.held++;
                return ++inUse;
            }
            Ticket ticket = enqueue(t, true);
            while (!ticket.granted) {
                ticket.handed.awaitUninterruptibly();
            }
            return inUse;
        } finally {
            lock.unlock();
        }
    }

    /** Gives a slot of the tenant's back, handing it to the queued request that fairness picks. */
    void release(String tenant) {
        lock.lock();
        try {
            Tenant t = tenants.get(tenant);
            if (t == null || t.held == 0) {
                throw new IllegalStateException("a slot released that the tenant does not hold");
            }
            t.held--;
            inUse--;
            if (inUse < slots) {
                handToNext();
            }
            forgetIfIdle(tenant, t);
        } finally {
            lock.unlock();
        }
    }

    /** Hands a free slot to the queued request that fairness picks; false when nobody queues. */
    private boolean handToNext() {
        Tenant next = fewestHeld();
        if (next == null) {
            return false;
        }
        Ticket ticket = next.queue.poll();
        queued--;
        if (next.queue.isEmpty()) {
            queueing.remove(next);
        }
        next.held++;
        inUse++;
        ticket.granted = true;
        ticket.handed.signal();
        return true;
    }

    /** The queued tenant holding the fewest slots; among equals, the one whose first request waited longest. */
    private Tenant fewestHeld() {
        Tenant best = null;
        for (Tenant t : queueing) {
            if (best == null || t.held < best.held
                    || (t.held == best.held && t.queue.peekFirst().serial < best.queue.peekFirst().serial)) {
                best = t;
            }
        }
        return best;
    }

    private Ticket enqueue(Tenant t, boolean first) {
        Ticket ticket = new Ticket(first ? Long.MIN_VALUE + serials++ : serials++, lock.newCondition());
        if (first) {
            t.queue.addFirst(ticket);
        } else {
            t.queue.addLast(ticket);
        }
        queued++;
        queueing.add(t);
        return ticket;
    }

    private void dequeue(String tenant, Tenant t, Ticket ticket) {
        t.queue.remove(ticket);
        queued--;
        if (t.queue.isEmpty()) {
            queueing.remove(t);
        }
        forgetIfIdle(tenant, t);
    }

    private void forgetIfIdle(String tenant, Tenant t) {
        if (t.held == 0 && t.queue.isEmpty()) {
            tenants.remove(tenant);
        }
    }

    /** Slots held now, by all tenants. */
    int inUse() {
        lock.lock();
        try {
            return inUse;
        } finally {
            lock.unlock();
        }
    }

    /** Requests queued now, of all tenants. */
    int queued() {
        lock.lock();
        try {
            return queued;
        } finally {
            lock.unlock();
        }
    }

    /** The tenant's slots held now (for tests and diagnosis). */
    int held(String tenant) {
        lock.lock();
        try {
            Tenant t = tenants.get(tenant);
            return t == null ? 0 : t.held;
        } finally {
            lock.unlock();
        }
    }

    /** The tenant's requests queued now (for tests and diagnosis). */
    int queued(String tenant) {
        lock.lock();
        try {
            Tenant t = tenants.get(tenant);
            return t == null ? 0 : t.queue.size();
        } finally {
            lock.unlock();
        }
    }
}
