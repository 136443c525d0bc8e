package io.leasekeeper.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The hand-over recorder, fed answer instants directly (nanoseconds): no clock, no threads. */
class HandOversTest {

    private static final long MS = 1_000_000;

    @Test
    void aGrantAfterAReleaseIsAHandOverTimedFromThatReleasesAnswer() {
        HandOvers handOvers = new HandOvers(0);
        handOvers.granted(1 * MS);   // the first grant of all: nothing was held, no hand-over
        handOvers.released(2 * MS);
        handOvers.granted(5 * MS);   // 3 ms after the release's answer
        handOvers.released(6 * MS);
        handOvers.granted(7 * MS);   // 1 ms

        HandOvers.Window window = handOvers.measure(2_000 * MS);
        assertThat(window.seconds()).isEqualTo(2.0);
        assertThat(window.handOvers()).isEqualTo(2);
        assertThat(window.perSecond()).isEqualTo(1.0);
        assertThat(window.latencies().getTotalCount()).isEqualTo(2);
        assertThat(window.latencies().getMinValue()).isBetween(1 * MS - MS / 100, 1 * MS);
        assertThat(window.latencies().getMaxValue()).isBetween(3 * MS - MS / 100, 3 * MS + MS / 100);
        assertThat(window.grantFirst()).isZero();
        assertThat(window.unmeasured()).isZero();
        assertThat(window.percentOver(2)).isEqualTo(50.0);
        assertThat(window.meanMillis()).isBetween(1.99, 2.01);
    }

    @Test
    void aGrantReportedBeforeItsReleaseWaitsForItAndIsTimedFromIt() {
        HandOvers handOvers = new HandOvers(0);
        handOvers.granted(0);
        // The release's answer came at 10 ms, the grant's at 12 ms, but the grant's client reported first.
        handOvers.granted(12 * MS);
        handOvers.released(10 * MS);

        HandOvers.Window window = handOvers.measure(1_000 * MS);
        assertThat(window.handOvers()).isEqualTo(1);
        assertThat(window.latencies().getMaxValue()).isBetween(2 * MS - MS / 100, 2 * MS + MS / 100);
        assertThat(window.grantFirst()).isZero();
    }

    @Test
    void aGrantAnsweredBeforeItsReleaseIsCountedAndRecordedAsZeroEitherWayItIsReported() {
        HandOvers handOvers = new HandOvers(0);
        handOvers.granted(0);
        handOvers.granted(30 * MS);  // reported first, answered first
        handOvers.released(32 * MS);
        handOvers.released(50 * MS); // reported first, answered last
        handOvers.granted(49 * MS);
        handOvers.released(60 * MS); // in order
        handOvers.granted(61 * MS);

        HandOvers.Window window = handOvers.measure(1_000 * MS);
        assertThat(window.handOvers()).isEqualTo(3);
        assertThat(window.grantFirst()).isEqualTo(2);
        assertThat(window.latencies().getTotalCount()).isEqualTo(3);
        assertThat(window.latencies().getMinValue()).isZero();
        assertThat(window.latencies().getValueAtPercentile(60)).isZero();
        assertThat(window.latencies().getMaxValue()).isBetween(1 * MS - MS / 100, 1 * MS + MS / 100);
    }

    @Test
    void severalGrantsAheadOfTheirReleasesPairInOrder() {
        HandOvers handOvers = new HandOvers(0);
        handOvers.granted(0);
        handOvers.granted(50 * MS);  // follows the release answered at 40
        handOvers.granted(60 * MS);  // follows the release answered at 55
        handOvers.released(40 * MS);
        handOvers.released(55 * MS);

        HandOvers.Window window = handOvers.measure(1_000 * MS);
        assertThat(window.handOvers()).isEqualTo(2);
        assertThat(window.grantFirst()).isZero();
        assertThat(window.latencies().getMinValue()).isBetween(5 * MS - MS / 100, 5 * MS + MS / 100);
        assertThat(window.latencies().getMaxValue()).isBetween(10 * MS - MS / 100, 10 * MS + MS / 100);
    }

    @Test
    void aReleaseWithoutAnAnswerMakesTheNextHandOverCountedButUnmeasuredAndKeepsThePairingInStep() {
        HandOvers handOvers = new HandOvers(0);
        handOvers.granted(0);
        handOvers.releaseUnknown();
        handOvers.granted(20 * MS);
        handOvers.released(21 * MS);
        handOvers.granted(24 * MS);

        HandOvers.Window window = handOvers.measure(1_000 * MS);
        assertThat(window.handOvers()).isEqualTo(2);
        assertThat(window.unmeasured()).isEqualTo(1);
        assertThat(window.latencies().getTotalCount()).isEqualTo(1);
        assertThat(window.latencies().getMaxValue()).isBetween(3 * MS - MS / 100, 3 * MS + MS / 100);
    }

    @Test
    void eachWindowCountsOnlyWhatCameSinceThePreviousOneWhileThePairingCarriesOver() {
        HandOvers handOvers = new HandOvers(0);
        handOvers.granted(0);
        handOvers.released(1 * MS);
        handOvers.granted(2 * MS);
        handOvers.released(3 * MS); // the window ends between this release and the grant after it
        HandOvers.Window warmUp = handOvers.measure(4 * MS);
        handOvers.granted(7 * MS);

        HandOvers.Window measured = handOvers.measure(1_004 * MS);
        assertThat(warmUp.handOvers()).isEqualTo(1);
        assertThat(measured.seconds()).isEqualTo(1.0);
        assertThat(measured.handOvers()).isEqualTo(1);
        assertThat(measured.latencies().getMaxValue()).isBetween(4 * MS - MS / 100, 4 * MS + MS / 100);
        assertThat(handOvers.measure(2_004 * MS).handOvers()).isZero();
    }

    @Test
    void aReleaseWithoutAGrantIsABugOfTheCaller() {
        assertThatThrownBy(() -> new HandOvers(0).released(1)).isInstanceOf(IllegalStateException.class);
    }
}
