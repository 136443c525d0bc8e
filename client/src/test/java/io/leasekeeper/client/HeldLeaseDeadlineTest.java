package io.leasekeeper.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Where a held lease's first local deadline counts from (HeldLease's doc), against a scripted service that answers
 * the acquire late: an acquire that waited counts from its answer's arrival, so a long wait does not make a fresh
 * grant lost at once; one that did not wait counts from its send, so a slow answer cannot move the deadline past
 * the service's expiry.
 */
class HeldLeaseDeadlineTest {

    private static final AcquireRequest REQUEST = AcquireRequest.of(LeaseKey.of(Target.opaque("k"), "a"), "h", 3);
    /** TTL 3 s, margin 1 s: counted from the acquire's send, the deadline is 2 s after it. */
    private static final HoldOptions OPTIONS = HoldOptions.defaults().withWatch(false);

    @Test
    void aLeaseGrantedAfterAWaitLongerThanTheTtlLessTheMarginIsStillHeldWhenHoldReturns() throws IOException {
        // The wait at the service (2.5 s) is longer than the TTL less the margin; the grant has its full TTL.
        try (ScriptedServer service = new ScriptedServer(exchange -> grantAfter(exchange, 2_500, 3_000));
             HeldLease lease = client(service).hold(REQUEST.withWaitSeconds(5), OPTIONS)) {
            assertThatCode(lease::checkValid).doesNotThrowAnyException();
            assertThat(lease.lost().toCompletableFuture()).isNotDone();
        }
    }

    @Test
    void theSameHoldsForAHoldWithAWaitOfAnyLength() throws IOException {
        // hold(request, wait, options), the command line's run: the same rule through waits of the service's cap.
        try (ScriptedServer service = new ScriptedServer(exchange -> grantAfter(exchange, 2_500, 3_000));
             HeldLease lease = client(service).hold(REQUEST, Duration.ofSeconds(5), OPTIONS)) {
            assertThatCode(lease::checkValid).doesNotThrowAnyException();
            assertThat(lease.lost().toCompletableFuture()).isNotDone();
        }
    }

    @Test
    void anAcquireWithoutAWaitCountsFromItsSendSoASlowAnswerIsNotTrustedBeyondWhatTheServiceGave() throws IOException {
        // Answered 0.5 s after its send with 1.2 s left: counted from the send, the deadline (send + 1.2 s - 1 s of
        // margin) passed before the answer arrived. Counted from the arrival it would be 0.2 s ahead, safe only as
        // far as the margin covers the answer's way back, which an acquire that did not wait need not rely on.
        try (ScriptedServer service = new ScriptedServer(exchange -> grantAfter(exchange, 500, 1_200));
             HeldLease lease = client(service).hold(REQUEST, OPTIONS)) {
            assertThatThrownBy(lease::checkValid).isInstanceOf(LeaseLostException.class)
                    .extracting(e -> ((LeaseLostException) e).loss()).isEqualTo(HeldLease.Loss.LOCAL_DEADLINE);
        }
    }

    /** The acquire answered after {@code delayMillis} (a wait at the service), anything else at once. */
    private static void grantAfter(HttpExchange exchange, long delayMillis, long remainingMs) throws IOException {
        if (ScriptedServer.isAcquire(exchange)) {
            try {
                Thread.sleep(delayMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        ScriptedServer.answer(exchange, ScriptedServer.isAcquire(exchange) ? 201 : 200, "application/json",
                ScriptedServer.lease(3, remainingMs));
    }

    private static LeasekeeperClient client(ScriptedServer service) {
        return LeasekeeperClient.builder(service.uri()).build();
    }
}
