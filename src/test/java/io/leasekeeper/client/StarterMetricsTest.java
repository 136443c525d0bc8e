package io.leasekeeper.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.client.autoconfigure.LeasekeeperClientAutoConfiguration;
import io.leasekeeper.client.autoconfigure.LeasekeeperClientProperties;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.wait.KeyWaiters;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The starter's auto-configured client against the whole service, as an application gets it from
 * {@code leasekeeper.client.*} with a MeterRegistry of its own: a held lease's renewals, its loss to a revoke
 * and a waiting acquire's outcome are counted, with the loss's reason and the wait's outcome as tags.
 */
class StarterMetricsTest extends IntegrationTest {

    private static final LeaseKey KEY = LeaseKey.of(Target.opaque("nightly"), "report");
    private static final Duration PATIENCE = Duration.ofSeconds(20);

    @Autowired
    KeyWaiters waiters;

    private ApplicationContextRunner application() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LeasekeeperClientAutoConfiguration.class))
                .withBean(SimpleMeterRegistry.class)
                .withPropertyValues("leasekeeper.client.base-url=http://127.0.0.1:" + port,
                        "leasekeeper.client.token=" + writer("alice"), "leasekeeper.client.holder=starter-test",
                        "leasekeeper.client.request-timeout=30s");
    }

    private LeasekeeperClient plainClient(String token) {
        return LeasekeeperClient.builder(URI.create("http://127.0.0.1:" + port)).token(token).build();
    }

    @Test
    void renewalsAndARevokeAreCountedWithTheLossesReason() {
        application().run(context -> {
            LeasekeeperClient client = context.getBean(LeasekeeperClient.class);
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            String holder = context.getBean(LeasekeeperClientProperties.class).holder();

            try (HeldLease held = client.hold(AcquireRequest.of(KEY, holder, 2), context.getBean(HoldOptions.class))) {
                await().atMost(PATIENCE).until(() -> count(registry, "leasekeeper.client.renewals", "outcome", "success") >= 1);

                plainClient(admin("root")).revoke(held.leaseId(), "maintenance");

                assertThat(held.lost().toCompletableFuture().get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
                        .isEqualTo(HeldLease.Loss.REVOKED);
            }
            // The listener is told right after lost() completes, on the client's thread.
            await().atMost(PATIENCE).until(() -> count(registry, "leasekeeper.client.losses", "reason", "revoked") == 1);
            assertThat(registry.find("leasekeeper.client.losses").counters())
                    .filteredOn(counter -> !"revoked".equals(counter.getId().getTag("reason")))
                    .allSatisfy(counter -> assertThat(counter.count()).isZero());
            assertThat(count(registry, "leasekeeper.client.renewals", "outcome", "success")).isGreaterThanOrEqualTo(1);
        });
    }

    @Test
    void aWaitingAcquireOnABusyKeyIsCountedBusyAndOneThatGetsTheKeyAcquired() {
        application().run(context -> {
            LeasekeeperClient client = context.getBean(LeasekeeperClient.class);
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            LeasekeeperClient other = plainClient(writer("alice"));
            Lease busy = other.acquire(AcquireRequest.of(KEY, "someone-else", 60));

            assertThatThrownBy(() -> client.acquire(AcquireRequest.of(KEY, "starter-test", 60).withWaitSeconds(1)))
                    .isInstanceOf(ProblemException.LeaseHeld.class);

            assertThat(count(registry, "leasekeeper.client.waits", "outcome", "busy")).isEqualTo(1);
            assertThat(count(registry, "leasekeeper.client.waits", "outcome", "acquired")).isZero();
            assertThat(registry.get("leasekeeper.client.wait.duration").tag("outcome", "busy").timer().count())
                    .isEqualTo(1);

            CompletableFuture<Lease> waiting = CompletableFuture.supplyAsync(
                    () -> client.acquire(AcquireRequest.of(KEY, "starter-test", 60).withWaitSeconds(20)));
            await().atMost(Duration.ofSeconds(10)).until(() -> waiters.count() == 1);
            other.release(busy.leaseId(), busy.fencingToken());

            assertThat(waiting.get(PATIENCE.toSeconds(), TimeUnit.SECONDS).holder()).isEqualTo("starter-test");
            assertThat(count(registry, "leasekeeper.client.waits", "outcome", "acquired")).isEqualTo(1);
            assertThat(count(registry, "leasekeeper.client.waits", "outcome", "busy")).isEqualTo(1);
        });
    }

    private static double count(MeterRegistry registry, String name, String tag, String value) {
        return registry.get(name).tag(tag, value).counter().count();
    }
}
