package io.leasekeeper.limits;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntConsumer;

/**
 * How many requests an instance works on at once by default: as many as keep it just short of queueing inside
 * itself, found from how long requests hold their slots (TCP Vegas, as Netflix's {@code concurrency-limits} applies
 * it to requests; docs/decisions/request-slots-adapt-to-latency.md says why this is not that library's class).
 *
 * <p>The samples are gathered in windows of at least {@link #WINDOW_NANOS} and {@link #WINDOW_SAMPLES} requests.
 * At each window's end, with {@code least} the shortest mean time of a window seen lately and {@code mean} this
 * window's, {@code limit * (1 - least / mean)} requests are taken to have queued inside the instance (for the
 * processors, the database's backends, the disk):
 * <ul>
 *   <li>more than {@link #MOST_QUEUED}: one slot fewer, down to {@code fewest};</li>
 *   <li>fewer than {@link #FEWEST_QUEUED}, and every slot was in use at some moment of the window: one slot more, up
 *       to {@code most}. A window that never used every slot says nothing of what more would do, so the limit
 *       stays where the last saturation left it, and the next burst finds that many slots, not more;</li>
 *   <li>else it stays.</li>
 * </ul>
 * Every {@link #PROBE_WINDOWS} windows the shortest time is forgotten and that window's mean taken instead (the
 * limit stays for that window), so that a lasting change (a slower database, a faster one) moves it.
 *
 * <p>The limit reads no clock: a sample brings its own start and length, so tests drive it exactly.
 */
final class LatencyLimit {

    static final long WINDOW_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    static final int WINDOW_SAMPLES = 10;
    static final int FEWEST_QUEUED = 2;
    static final int MOST_QUEUED = 3;
    static final int PROBE_WINDOWS = 600;

    private final int fewest;
    private final int most;
    private final IntConsumer onChange;
    private final ReentrantLock lock = new ReentrantLock();

    private int limit;
    private long least = Long.MAX_VALUE;
    private int windowsSinceProbe;
    private long windowEnd = Long.MIN_VALUE;
    private long sum;
    private int samples;
    private boolean saturated;

    /**
     * @param fewest   the fewest slots it sets
     * @param most     the most, and the first
     * @param onChange told each new limit, in the thread of the sample that ended the window, under this limit's
     *                 lock (so that two windows' changes arrive in their order); it must not call back
     */
    LatencyLimit(int fewest, int most, IntConsumer onChange) {
        if (fewest < 1 || most < fewest) {
            throw new IllegalArgumentException("the limits must be 1 <= fewest <= most");
        }
        this.fewest = fewest;
        this.most = most;
        this.onChange = onChange;
        this.limit = most;
    }

    int limit() {
        lock.lock();
        try {
            return limit;
        } finally {
            lock.unlock();
        }
    }

    /**
     * One request's slot, held {@code heldNanos} from {@code startNanos}, with {@code inFlight} slots held at its
     * start, its own included.
     */
    void sample(long startNanos, long heldNanos, int inFlight) {
        lock.lock();
        try {
            long end = startNanos + heldNanos;
            if (windowEnd == Long.MIN_VALUE) {
                windowEnd = end + WINDOW_NANOS;
            }
            sum += heldNanos;
            samples++;
            saturated |= inFlight >= limit;
            if (end < windowEnd || samples < WINDOW_SAMPLES) {
                return;
            }
            int changed = endWindow(sum / samples);
            windowEnd = end + WINDOW_NANOS;
            sum = 0;
            samples = 0;
            saturated = false;
            if (changed > 0) {
                onChange.accept(changed);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Moves the limit after a window of the given mean; answers the new limit, or 0 if it stayed. */
    private int endWindow(long mean) {
        if (++windowsSinceProbe >= PROBE_WINDOWS) {
            windowsSinceProbe = 0;
            least = mean;
            return 0;
        }
        if (mean < least) {
            least = mean;
        }
        double queued = limit * (1 - (double) least / Math.max(1, mean));
        int next = limit;
        if (queued > MOST_QUEUED) {
            next = Math.max(fewest, limit - 1);
        } else if (queued < FEWEST_QUEUED && saturated) {
            next = Math.min(most, limit + 1);
        }
        if (next == limit) {
            return 0;
        }
        limit = next;
        return next;
    }
}
