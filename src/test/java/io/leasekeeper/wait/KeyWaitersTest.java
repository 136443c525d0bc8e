package io.leasekeeper.wait;

import static org.assertj.core.api.Assertions.assertThat;

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
        LeasekeeperProperties properties = new Binder(new MapConfigurationPropertySource(Map.of()))
                .bindOrCreate("leasekeeper", LeasekeeperProperties.class);
        waiters = new KeyWaiters(properties, new SimpleMeterRegistry());
        waiters.start();
        waiters.listening(true);
    }

    @Test
    void aWaiterThatJoinsWithNothingNotifiedIsNotWoken() {
        KeyWaiters.Waiter waiter = waiters.acquirer().orElseThrow();
        waiter.waitFor(KEY, System.nanoTime());
        assertThat(pending(waiter)).isEqualTo(KeyWaiters.Wake.TIMED_OUT);
    }

    @Test
    void aKeyFreedSinceTheWaitersTryBeganWakesItWhenItJoins() {
        long triedAt = System.nanoTime();
        waiters.freed(List.of(new FreedKeys.Freed(KEY, null)));
        KeyWaiters.Waiter waiter = waiters.acquirer().orElseThrow();
        waiter.waitFor(KEY, triedAt);
        assertThat(pending(waiter)).isEqualTo(KeyWaiters.Wake.FREED);
    }

    @Test
    void aHandOverWakesOnlyTheWaiterItNamesEvenBeforeItJoinsItsKey() {
        KeyWaiters.Waiter first = waiters.acquirer().orElseThrow();
        KeyWaiters.Waiter named = waiters.acquirer().orElseThrow();
        first.waitFor(KEY, System.nanoTime());
        waiters.freed(List.of(new FreedKeys.Freed(KEY, named.id())));
        named.waitFor(KEY, System.nanoTime());
        assertThat(pending(named)).isEqualTo(KeyWaiters.Wake.GRANTED);
        assertThat(pending(first)).as("the head of the instance, not named").isEqualTo(KeyWaiters.Wake.TIMED_OUT);
    }

    @Test
    void aFreeKeyWakesTheHeadOnlyAndAHeadLeavingWithoutTheKeyMakesTheNextTry() {
        KeyWaiters.Waiter head = waiters.acquirer().orElseThrow();
        KeyWaiters.Waiter next = waiters.acquirer().orElseThrow();
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
        KeyWaiters.Waiter head = waiters.acquirer().orElseThrow();
        KeyWaiters.Waiter next = waiters.acquirer().orElseThrow();
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
