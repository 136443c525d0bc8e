package io.leasekeeper.limits;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The sharing rules of the instance's slots, one rule a test. Requests that must queue run on threads of their own;
 * the test waits for each to be queued (the scheduler's own count) before the next step, never for a time.
 */
class FairSlotsTest {

    private static final long NO_TIMEOUT = TimeUnit.MINUTES.toNanos(1);

    private final ExecutorService requests = Executors.newVirtualThreadPerTaskExecutor();

    @AfterEach
    void stop() {
        requests.shutdownNow();
    }

    @Test
    void aTenantAloneTakesEverySlotWithoutQueueing() throws Exception {
        FairSlots slots = new FairSlots(3, 10);
        for (int i = 0; i < 3; i++) {
            slots.take("a", 0);
        }
        assertThat(slots.held("a")).isEqualTo(3);
        assertThat(slots.queued()).isZero();
    }

    @Test
    void aFreedSlotGoesToTheQueuedTenantHoldingTheFewestEvenIfAnotherQueuedFirst() throws Exception {
        FairSlots slots = new FairSlots(2, 10);
        slots.take("a", 0);
        slots.take("a", 0);
        CompletableFuture<Void> aThird = queue(slots, "a");
        await().atMost(Duration.ofSeconds(10)).until(() -> slots.queued("a") == 1);
        CompletableFuture<Void> bFirst = queue(slots, "b");
        await().atMost(Duration.ofSeconds(10)).until(() -> slots.queued("b") == 1);

        slots.release("a");
        bFirst.get(10, TimeUnit.SECONDS);
        assertThat(slots.held("b")).as("b held none, a one: b is served first").isEqualTo(1);
        assertThat(aThird).isNotDone();

        slots.release("a");
        aThird.get(10, TimeUnit.SECONDS);
        assertThat(slots.held("a")).isEqualTo(1);
        assertThat(slots.inUse()).isEqualTo(2);
        assertThat(slots.queued()).isZero();
    }

    @Test
    void competingTenantsConvergeOnEqualShares() throws Exception {
        FairSlots slots = new FairSlots(4, 100);
        for (int i = 0; i < 4; i++) {
            slots.take("flood", 0);
        }
        for (int i = 0; i < 8; i++) {
            queue(slots, "flood");
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> slots.queued("flood") == 8);
        for (int i = 0; i < 8; i++) {
            queue(slots, "steady");
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> slots.queued("steady") == 8);

        for (int i = 0; i < 4; i++) { // four of the flood's requests end
            slots.release("flood");
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> slots.inUse() == 4);
        assertThat(slots.held("steady")).isEqualTo(2);
        assertThat(slots.held("flood")).isEqualTo(2);
    }

    @Test
    void aTenantsQueueIsBoundedAndARequestBeyondItIsRefusedHoldingNothing() throws Exception {
        FairSlots slots = new FairSlots(1, 1);
        slots.take("a", 0);
        queue(slots, "a");
        await().atMost(Duration.ofSeconds(10)).until(() -> slots.queued("a") == 1);

        assertThatThrownBy(() -> slots.take("a", NO_TIMEOUT)).isInstanceOf(FairSlots.RefusedException.class)
                .extracting(e -> ((FairSlots.RefusedException) e).reason()).isEqualTo(FairSlots.Refused.QUEUE_FULL);
        assertThat(slots.queued("a")).isEqualTo(1);
        queue(slots, "b");
        await().atMost(Duration.ofSeconds(10)).until(() -> slots.queued("b") == 1);
    }

    @Test
    void aRequestThatWaitedItsTimeoutIsRefusedAndLeavesTheQueue() throws Exception {
        FairSlots slots = new FairSlots(1, 10);
        slots.take("a", 0);
        assertThatThrownBy(() -> slots.take("b", 0)).isInstanceOf(FairSlots.RefusedException.class)
                .extracting(e -> ((FairSlots.RefusedException) e).reason())
                .isEqualTo(FairSlots.Refused.WAITED_TOO_LONG);
        assertThat(slots.queued()).isZero();
        assertThat(slots.held("b")).isZero();
        slots.release("a");
        assertThat(slots.inUse()).as("the slot was handed to no one").isZero();
    }

    @Test
    void aRequestTakingItsSlotBackAfterAWaitIsServedFirstAmongItsTenantsRequests() throws Exception {
        FairSlots slots = new FairSlots(1, 1);
        slots.take("a", 0);
        CompletableFuture<Void> queued = queue(slots, "a");
        await().atMost(Duration.ofSeconds(10)).until(() -> slots.queued("a") == 1);
        CompletableFuture<Void> back = CompletableFuture.runAsync(() -> slots.takeBack("a"), requests);
        await().atMost(Duration.ofSeconds(10)).until(() -> slots.queued("a") == 2);

        slots.release("a");
        back.get(10, TimeUnit.SECONDS);
        assertThat(queued).isNotDone();
        slots.release("a");
        queued.get(10, TimeUnit.SECONDS);
    }

    @Test
    void moreSlotsGoToQueuedRequestsAtOnceFairly() throws Exception {
        FairSlots slots = new FairSlots(2, 10);
        slots.take("flood", 0);
        slots.take("flood", 0);
        CompletableFuture<Void> flood = queue(slots, "flood");
        await().atMost(Duration.ofSeconds(10)).until(() -> slots.queued("flood") == 1);
        CompletableFuture<Void> steady = queue(slots, "steady");
        await().atMost(Duration.ofSeconds(10)).until(() -> slots.queued("steady") == 1);

        slots.resize(3);
        steady.get(10, TimeUnit.SECONDS);
        assertThat(flood).as("one more slot: the tenant holding none is served").isNotDone();
        slots.resize(4);
        flood.get(10, TimeUnit.SECONDS);
        assertThat(slots.inUse()).isEqualTo(4);
        assertThat(slots.queued()).isZero();
    }

    @Test
    void fewerSlotsTakeNoSlotAwayAndHandNoneOutUntilEnoughCameBack() throws Exception {
        FairSlots slots = new FairSlots(3, 10);
        for (int i = 0; i < 3; i++) {
            slots.take("a", 0);
        }
        slots.resize(1);
        assertThat(slots.held("a")).as("held slots are kept").isEqualTo(3);
        CompletableFuture<Void> b = queue(slots, "b");
        await().atMost(Duration.ofSeconds(10)).until(() -> slots.queued("b") == 1);

        slots.release("a");
        slots.release("a");
        assertThat(slots.inUse()).isEqualTo(1);
        assertThat(b).as("one slot, still held").isNotDone();
        slots.release("a");
        b.get(10, TimeUnit.SECONDS);
        assertThat(slots.inUse()).isEqualTo(1);
        assertThat(slots.held("b")).isEqualTo(1);
    }

    @Test
    void releasingASlotNotHeldIsABug() {
        FairSlots slots = new FairSlots(1, 1);
        assertThatThrownBy(() -> slots.release("a")).isInstanceOf(IllegalStateException.class);
    }

    private CompletableFuture<Void> queue(FairSlots slots, String tenant) {
        return CompletableFuture.runAsync(() -> {
            try {
                slots.take(tenant, NO_TIMEOUT);
            } catch (FairSlots.RefusedException e) {
                throw new IllegalStateException(e);
            }
        }, requests);
    }
}
