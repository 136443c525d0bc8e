package io.leasekeeper.wait;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.leasekeeper.config.LeasekeeperProperties;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * The wake-ups of one instance's waiters, without a database: each check awaits with a deadline of now,
 * so it only reads whether a wake-up is pending and never waits.
 */
class KeyWaitersTest {

    private static final long KEY = 7;

    private KeyWaiters waiters;

    @BeforeEach
    void started() {
        waiters = started(Map.of());
    }

    private static KeyWaiters started(Map<String, String> settings) {
        LeasekeeperProperties properties = new Binder(new MapConfigurationPropertySource(settings))
                .bindOrCreate("leasekeeper", LeasekeeperProperties.class);
        KeyWaiters waiters = new KeyWaiters(properties, new SimpleMeterRegistry());
        waiters.start();
        waiters.listening(true);
        return waiters;
    }

    @Test
    void aTenantAloneMayTakeEveryPlaceAndIsRefusedOnlyWhenTheyAreAllTaken() {
        KeyWaiters capped = started(Map.of("leasekeeper.wait.max-waiters", "4"));
        for (int i = 0; i < 4; i++) {
            assertThat(capped.acquirer("a")).isPresent();
        }
        assertThatThrownBy(() -> capped.watch("a", KEY, System.nanoTime())).isInstanceOf(KeyWaiters.OverShare.class);
        assertThat(capped.count()).isEqualTo(4);
    }

    @Test
    void aTenantBelowItsShareOfAFullCapTakesThePlaceOfTheNewestWaiterOfTheTenantHoldingTheMost() {
        KeyWaiters capped = started(Map.of("leasekeeper.wait.max-waiters", "4"));
        List<KeyWaiters.Waiter> flood = new java.util.ArrayList<>();
        for (int i = 0; i < 4; i++) {
            KeyWaiters.Waiter w = capped.acquirer("flood").orElseThrow();
            w.waitFor(KEY, System.nanoTime());
            flood.add(w);
        }
        KeyWaiters.Waiter steady = capped.watch("steady", KEY, System.nanoTime()).orElseThrow();

        assertThat(flood.getLast().await(System.nanoTime())).isEqualTo(KeyWaiters.Wake.EVICTED);
        assertThat(flood.getFirst().await(System.nanoTime())).isEqualTo(KeyWaiters.Wake.TIMED_OUT);
        assertThat(steady.await(System.nanoTime())).isEqualTo(KeyWaiters.Wake.TIMED_OUT);
        // Two tenants wait: each may hold two places. The flood holds three, so the next steady waiter evicts
        // again; a third of the flood's is refused, since the flood is over its share.
        assertThat(capped.acquirer("steady")).isPresent();
        assertThat(flood.get(2).await(System.nanoTime())).isEqualTo(KeyWaiters.Wake.EVICTED);
        assertThatThrownBy(() -> capped.acquirer("flood")).isInstanceOf(KeyWaiters.OverShare.class);
        assertThatThrownBy(() -> capped.acquirer("steady")).isInstanceOf(KeyWaiters.OverShare.class);

        flood.getLast().close(); // an evicted waiter answering frees no second place
        assertThatThrownBy(() -> capped.acquirer("steady")).isInstanceOf(KeyWaiters.OverShare.class);
        flood.getFirst().close();
        assertThat(capped.acquirer("flood")).as("a place freed by a waiter that answered").isPresent();
    }

    @Test
    void aWaiterThatJoinsWithNothingNotifiedIsNotWoken() {
        KeyWaiters.Waiter waiter = waiters.acquirer("t").orElseThrow();
        waiter.waitFor(KEY, System.nanoTime());
        assertThat(pending(waiter)).isEqualTo(KeyWaiters.Wake.TIMED_OUT);
    }

    @Test
    void aKeyFreedSinceTheWaitersTryBeganWakesItWhenItJoins() {
        long triedAt = System.nanoTime();
        waiters.freed(List.of(new FreedKeys.Freed(KEY, null)));
        KeyWaiters.Waiter waiter = waiters.acquirer("t").orElseThrow();
        waiter.waitFor(KEY, triedAt);
        assertThat(pending(waiter)).isEqualTo(KeyWaiters.Wake.FREED);
    }

    @Test
    void aHandOverWakesOnlyTheWaiterItNamesEvenBeforeItJoinsItsKey() {
        KeyWaiters.Waiter first = waiters.acquirer("t").orElseThrow();
        KeyWaiters.Waiter named = waiters.acquirer("t").orElseThrow();
        first.waitFor(KEY, System.nanoTime());
        waiters.freed(List.of(new FreedKeys.Freed(KEY, named.id())));
        named.waitFor(KEY, System.nanoTime());
        assertThat(pending(named)).isEqualTo(KeyWaiters.Wake.OFFERED);
        assertThat(pending(first)).as("the head of the instance, not named").isEqualTo(KeyWaiters.Wake.TIMED_OUT);
    }

    @Test
    void aFreeKeyWakesTheHeadOnlyAndAHeadLeavingWithoutTheKeyMakesTheNextTry() {
        KeyWaiters.Waiter head = waiters.acquirer("t").orElseThrow();
        KeyWaiters.Waiter next = waiters.acquirer("t").orElseThrow();
        head.waitFor(KEY, System.nanoTime());
        next.waitFor(KEY, System.nanoTime());
        waiters.freed(List.of(new FreedKeys.Freed(KEY, null)));
        assertThat(pending(head)).isEqualTo(KeyWaiters.Wake.FREED);
        assertThat(pending(next)).isEqualTo(KeyWaiters.Wake.TIMED_OUT);

        head.close();

        assertThat(next.isHead()).isTrue();
        assertThat(pending(next)).isEqualTo(KeyWaiters.Wake.FREED);
    }

    @Test
    void aHeadLeavingWithTheKeyMakesTheNextHeadWithoutATry() {
        KeyWaiters.Waiter head = waiters.acquirer("t").orElseThrow();
        KeyWaiters.Waiter next = waiters.acquirer("t").orElseThrow();
        head.waitFor(KEY, System.nanoTime());
        next.waitFor(KEY, System.nanoTime());

        head.tookKey();
        head.close();

        assertThat(next.isHead()).isTrue();
        assertThat(pending(next)).isEqualTo(KeyWaiters.Wake.TIMED_OUT);
        assertThat(waiters.count()).isEqualTo(1);
    }

    private static KeyWaiters.Wake pending(KeyWaiters.Waiter waiter) {
        return waiter.await(System.nanoTime());
    }
}
