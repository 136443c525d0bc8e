package io.leasekeeper.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.IntegrationTest;
import java.net.URI;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.TestPropertySource;

/**
 * A wait longer than the service's cap (here {@code leasekeeper.wait.max} = 2 s): the library learns the cap
 * from the service's 400 and waits in repeated waiting acquires of at most that long, until the key is free
 * or the whole wait has passed.
 */
@TestPropertySource(properties = "leasekeeper.wait.max=2s")
class LongWaitTest extends IntegrationTest {

    private static final LeaseKey KEY = LeaseKey.of(Target.opaque("nightly"), "report");

    private LeasekeeperClient client(String token) {
        return LeasekeeperClient.builder(URI.create("http://127.0.0.1:" + port)).token(token).build();
    }

    @Test
    void aWaitLongerThanTheCapIsRepeatedUntilTheKeyIsReleased() throws Exception {
        var held = acquire(writer("bob"), "nightly", "report", "pod-b", 60).body();
        CompletableFuture<Lease> waiting = CompletableFuture.supplyAsync(
                () -> client(writer("alice")).acquire(AcquireRequest.of(KEY, "job-1", 30), Duration.ofSeconds(60)));

        // Each waiting acquire queues a row of its own: two rows seen, one after the other, is a repeated wait.
        Set<UUID> rows = ConcurrentHashMap.newKeySet();
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            rows.addAll(jdbc.sql("SELECT id FROM lease_waiter WHERE tenant = :t").param("t", tenant)
                    .query(UUID.class).list());
            return rows.size() >= 2;
        });
        assertThat(waiting).isNotDone();
        release(writer("bob"), held.get("leaseId").asString(), held.get("fencingToken").asLong());

        Lease lease = waiting.get(10, TimeUnit.SECONDS);
        assertThat(lease.owner()).isEqualTo("alice");
        assertThat(lease.active()).isTrue();
    }

    @Test
    void aWaitThatEndsWithTheKeyStillBusyThrowsWhatTheServiceAnsweredNoSooner() {
        acquire(writer("bob"), "nightly", "report", "pod-b", 60);
        long start = System.nanoTime();

        assertThatThrownBy(() -> client(writer("alice")).acquire(AcquireRequest.of(KEY, "job-1", 30),
                Duration.ofSeconds(5)))
                .isInstanceOfSatisfying(ProblemException.LeaseHeld.class,
                        busy -> assertThat(busy.holder().owner()).isEqualTo("bob"));
        assertThat(System.nanoTime() - start).as("waited the whole 5 s")
                .isGreaterThanOrEqualTo(TimeUnit.SECONDS.toNanos(5));
    }
}
