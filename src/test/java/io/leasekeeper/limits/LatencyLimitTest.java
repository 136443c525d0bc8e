package io.leasekeeper.limits;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The default limit of the instance's slots, driven by samples whose times the test sets: the limit reads no clock
 * (a window ends with the first sample that ends past it), so every step here is exact.
 */
class LatencyLimitTest {

    private static final int FEWEST = 2;
    private static final int MOST = 16;

    private final List<Integer> told = new ArrayList<>();
    private final LatencyLimit limit = new LatencyLimit(FEWEST, MOST, told::add);
    private long now = TimeUnit.SECONDS.toNanos(1);

    @Test
    void startsAtTheMostAndStaysThereWhileRequestsTakeTheirLeastTime() {
        assertThat(limit.limit()).isEqualTo(MOST);
        windows(20, 2.0, MOST);
        assertThat(limit.limit()).isEqualTo(MOST);
        assertThat(told).isEmpty();
    }

    @Test
    void shrinksOneSlotAWindowWhileMoreThanThreeRequestsQueueInsideTheInstance() {
        windows(1, 2.0, MOST); // the least time a slot is held: 2 ms
        windows(1, 8.0, MOST); // four times as long: 16 * (1 - 2 / 8) = 12 requests queued
        assertThat(limit.limit()).isEqualTo(MOST - 1);
        windows(30, 8.0, MOST);
        // Until limit * (1 - 2 / 8) is at most 3: 4 slots.
        assertThat(limit.limit()).isEqualTo(4);
        assertThat(told).startsWith(15, 14, 13).endsWith(5, 4).hasSize(12);
    }

    @Test
    void growsOneSlotAWindowOnlyWhileEverySlotIsUsedAndFewRequestsQueue() {
        windows(1, 2.0, MOST);
        windows(30, 8.0, MOST);
        assertThat(limit.limit()).isEqualTo(4);

        windows(5, 2.0, 3); // a lull: fast, but never every slot in use
        assertThat(limit.limit()).as("what more slots would do is unknown: it stays").isEqualTo(4);

        windows(3, 2.1, 16); // saturated, and 4 * (1 - 2 / 2.1) < 2 requests queued
        assertThat(limit.limit()).isEqualTo(7);
        windows(30, 2.1, 16);
        assertThat(limit.limit()).isEqualTo(MOST);
    }

    @Test
    void neverGoesBelowTheFewest() {
        LatencyLimit fewestFour = new LatencyLimit(4, MOST, told::add);
        windows(fewestFour, 1, 1.0, MOST);
        windows(fewestFour, 50, 100.0, MOST); // 3 * (1 - 1 / 100) would be few enough; 4 is the fewest
        assertThat(fewestFour.limit()).isEqualTo(4);
    }

    @Test
    void forgetsTheLeastTimeNowAndThenSoThatALastingChangeMovesIt() {
        windows(1, 1.0, MOST); // a least time the instance never sees again
        windows(30, 4.0, MOST); // every window since: 4 ms, 16 * (1 - 1 / 4) = 12 queued, so it shrinks
        int shrunk = limit.limit();
        assertThat(shrunk).isLessThan(MOST);

        windows(LatencyLimit.PROBE_WINDOWS, 4.0, MOST); // the least is taken again: 4 ms, nothing queues
        windows(30, 4.0, MOST);
        assertThat(limit.limit()).isEqualTo(MOST);
    }

    @Test
    void aWindowNeedsItsSamplesAsWellAsItsTime() {
        windows(1, 2.0, MOST);
        for (int i = 0; i < LatencyLimit.WINDOW_SAMPLES - 1; i++) { // a second of few, slow requests
            now += TimeUnit.MILLISECONDS.toNanos(100);
            limit.sample(now, TimeUnit.MILLISECONDS.toNanos(20), MOST);
        }
        assertThat(limit.limit()).as("nine samples are no window").isEqualTo(MOST);
        now += TimeUnit.MILLISECONDS.toNanos(100);
        limit.sample(now, TimeUnit.MILLISECONDS.toNanos(20), MOST);
        assertThat(limit.limit()).isEqualTo(MOST - 1);
    }

    @Test
    void refusesLimitsThatCannotHold() {
        assertThatThrownBy(() -> new LatencyLimit(0, 4, n -> { })).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new LatencyLimit(5, 4, n -> { })).isInstanceOf(IllegalArgumentException.class);
    }

    private void windows(int count, double millis, int inFlight) {
        windows(limit, count, millis, inFlight);
    }

    /**
     * Windows of {@code WINDOW_SAMPLES} requests each that held their slots {@code millis} (at most a window's
     * length), with {@code inFlight} slots held: all but the last start together, and the last one starts two
     * windows' lengths later, so that it ends the window and none before it does.
     */
    private void windows(LatencyLimit limit, int count, double millis, int inFlight) {
        long held = (long) (millis * 1_000_000);
        for (int w = 0; w < count; w++) {
            for (int i = 0; i < LatencyLimit.WINDOW_SAMPLES - 1; i++) {
                limit.sample(now, held, inFlight);
            }
            now += 2 * LatencyLimit.WINDOW_NANOS;
            limit.sample(now, held, inFlight);
        }
    }
}
