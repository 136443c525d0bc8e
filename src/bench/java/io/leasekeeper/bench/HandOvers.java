package io.leasekeeper.bench;

import java.util.ArrayDeque;
import org.HdrHistogram.Histogram;

/**
 * Hand-overs of one lock (or one hot lease key) among many clients, as the clients see them: each client
 * reports the instant ({@link System#nanoTime()}) at which the answer to its grant (a 201 acquire, an etcd
 * lock) arrived, and the instant at which the answer to its release (a release, an etcd unlock) arrived. A
 * hand-over is a grant that follows a release; its latency is the grant's answer time minus that release's
 * answer time. {@link #measure(long)} gives what was counted since its previous call (or the start), as
 * {@link HttpLoad#measure()} does for latencies.
 *
 * <p>Pairing. The lock has one holder at a time, so in the server the n-th release comes before the
 * (n+1)-th grant. The recorder pairs grants with releases by that count, not by the order in which the
 * clients' reports happen to reach it: a client's report may be late (its thread not yet scheduled after the
 * answer arrived) or the answer to a release may itself arrive after the answer to the grant it made
 * possible (the two answers travel on different connections to different clients). So:
 * <ul>
 *   <li>{@code holders} = grants reported minus releases reported: 0 or 1 when reports come in order.</li>
 *   <li>A grant reported while {@code holders} is 0 pairs with the last release reported (none before the
 *       very first grant, which is no hand-over).</li>
 *   <li>A grant reported while {@code holders} is 1 or more came before the report of the release it
 *       follows: it waits in a queue, and the next release reported pairs with the oldest one waiting.</li>
 *   <li>Whichever order the two were reported in, the latency is grant time minus release time. When that is
 *       negative (the grant's answer arrived before the release's answer) the hand-over is counted in
 *       {@link Window#grantFirst()} and recorded as 0 in the histogram: never a negative latency, and never a
 *       latency measured from an earlier, unrelated release.</li>
 *   <li>A release whose answer never came (an error, a timeout: the lock may still have been released, or
 *       freed later by expiry) is reported with {@link #releaseUnknown()}: the grant after it counts as a
 *       hand-over in {@link Window#unmeasured()} without a latency, and the pairing stays in step.</li>
 * </ul>
 * Thread-safe: every method holds the recorder's monitor (a few hundred reports a second; the instants are
 * taken by the callers before they call, so waiting for the monitor does not change a latency).
 */
final class HandOvers {

    /** What a window counted. Latencies in nanoseconds. */
    record Window(double seconds, long handOvers, long grantFirst, long unmeasured, Histogram latencies) {

        double perSecond() {
            return handOvers / seconds;
        }

        double millis(double percentile) {
            return latencies.getTotalCount() == 0 ? Double.NaN : latencies.getValueAtPercentile(percentile) / 1e6;
        }

        /** The share of timed hand-overs that took longer than {@code millis}, in percent. */
        double percentOver(double millis) {
            long total = latencies.getTotalCount();
            return total == 0 ? Double.NaN
                    : 100.0 * (total - latencies.getCountBetweenValues(0, (long) (millis * 1e6))) / total;
        }

        double meanMillis() {
            return latencies.getTotalCount() == 0 ? Double.NaN : latencies.getMean() / 1e6;
        }
    }

    private static final long UNKNOWN = Long.MIN_VALUE;

    private final ArrayDeque<Long> grantsBeforeTheirRelease = new ArrayDeque<>();
    /** Grants reported minus releases reported. */
    private int holders;
    /** Whether a release waits for the grant that follows it, and its answer time (or {@link #UNKNOWN}). */
    private boolean releaseWaiting;
    private long lastRelease;
    private Histogram latencies = new Histogram(3);
    private long handOvers;
    private long grantFirst;
    private long unmeasured;
    private long windowStart;

    HandOvers(long startNanos) {
        this.windowStart = startNanos;
    }

    HandOvers() {
        this(System.nanoTime());
    }

    /** The answer to a grant arrived at {@code nanos}. */
    synchronized void granted(long nanos) {
        if (holders == 0) {
            if (releaseWaiting) {
                pair(nanos, lastRelease);
                releaseWaiting = false;
            }
            // else the first grant of all: nothing was held before it, no hand-over
        } else {
            grantsBeforeTheirRelease.addLast(nanos);
        }
        holders++;
    }

    /** The answer to a release arrived at {@code nanos}. */
    synchronized void released(long nanos) {
        release(nanos);
    }

    /** A release whose answer did not come: whether and when the lock was freed is unknown. */
    synchronized void releaseUnknown() {
        release(UNKNOWN);
    }

    private void release(long nanos) {
        if (holders == 0) {
            throw new IllegalStateException("a release reported without a grant before it");
        }
        holders--;
        if (!grantsBeforeTheirRelease.isEmpty()) {
            pair(grantsBeforeTheirRelease.removeFirst(), nanos);
        } else {
            releaseWaiting = true;
            lastRelease = nanos;
        }
    }

    private void pair(long grant, long release) {
        handOvers++;
        if (release == UNKNOWN) {
            unmeasured++;
            return;
        }
        long latency = grant - release;
        if (latency < 0) {
            grantFirst++;
            latency = 0;
        }
        latencies.recordValue(latency);
    }

    /** What was counted since the previous call (or the start); {@code nowNanos} ends the window. */
    synchronized Window measure(long nowNanos) {
        Window window = new Window((nowNanos - windowStart) / 1e9, handOvers, grantFirst, unmeasured, latencies);
        windowStart = nowNanos;
        latencies = new Histogram(3);
        handOvers = 0;
        grantFirst = 0;
        unmeasured = 0;
        return window;
    }

    Window measure() {
        return measure(System.nanoTime());
    }
}
