package io.leasekeeper.limits;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.TestDatabase;
import io.leasekeeper.wait.KeyWaiters;
import io.micrometer.core.instrument.MeterRegistry;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

/**
 * One request in progress at a time on this instance here: while it is held (its statement waits on a key's row
 * lock that another session holds), the next request, of its tenant or another, waits in its tenant's queue and,
 * after the queue's timeout (1 s here), answers 429 TENANT_BUSY with Retry-After, changing nothing: load a client
 * caused, never a 5xx. A request that waits for a key gives its slot up while it waits. Events are ordered by the
 * service's own counts (requests queued, sessions waiting on the lock, waiters), never by sleeping. The sharing
 * rules themselves are FairSlotsTest's.
 */
@TestPropertySource(properties = {"leasekeeper.limits.requests-in-progress=1", "leasekeeper.limits.queue-timeout=1s",
        "spring.datasource.hikari.data-source-properties.options=-c lock_timeout=30s"})
class TenantSlotsTest extends IntegrationTest {

    @Autowired
    TenantSlots slots;

    @Autowired
    KeyWaiters waiters;

    @Autowired
    MeterRegistry meters;

    private final ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor();

    @AfterEach
    void stopClients() {
        clients.shutdownNow();
    }

    @Test
    void aRequestThatWaitedItsTenantsShareTooLongAnswers429TenantBusyAndChangesNothing() throws Exception {
        assertThat(slots.slots()).isEqualTo(1);
        double refusedBefore = refused();
        String tenantA = tenant;
        String alice = writer("alice");
        var lease = acquire(alice, "nightly", "report", "pod-1", 60).body();
        String leaseId = lease.get("leaseId").asString();
        long token = lease.get("fencingToken").asLong();

        TestDatabase.Connection db = TestDatabase.connection();
        try (Connection blocker = DriverManager.getConnection(db.url(), db.username(), db.password())) {
            blocker.setAutoCommit(false);
            try (PreparedStatement lock = blocker.prepareStatement("SELECT 1 FROM lease_key WHERE tenant = ? FOR UPDATE")) {
                lock.setString(1, tenantA);
                assertThat(lock.executeQuery().next()).isTrue();
            }
            CompletableFuture<Api.Response> held = CompletableFuture.supplyAsync(() -> renew(alice, leaseId, token), clients);
            await().atMost(Duration.ofSeconds(30)).until(() -> lockWaiters() == 1);

            tenant = "t-other-" + tenantA;
            CompletableFuture<Api.Response> other = CompletableFuture.supplyAsync(
                    () -> acquire(writer("bob"), "nightly", "report", "pod-1", 60), clients);
            await().atMost(Duration.ofSeconds(30)).until(() -> slots.queued(tenant) == 1);

            Api.Response refused = other.get(30, TimeUnit.SECONDS);
            assertThat(held).as("the request holding the slot still waits on the lock").isNotDone();
            blocker.rollback();

            assertThat(refused.status()).isEqualTo(429);
            assertThat(refused.header("Content-Type")).startsWith("application/problem+json");
            assertThat(refused.body().get("code").asString()).isEqualTo("TENANT_BUSY");
            assertThat(refused.header("Retry-After")).isEqualTo("1");
            assertThat(refused() - refusedBefore).isEqualTo(1);
            assertThat(held.get(30, TimeUnit.SECONDS).status()).isEqualTo(200);
            assertThat(jdbc.sql("SELECT count(*) FROM lease_key WHERE tenant = :tenant").param("tenant", tenant)
                    .query(Long.class).single()).as("the refused acquire changed nothing").isZero();
            assertThat(acquire(writer("bob"), "nightly", "report", "pod-1", 60).status())
                    .as("the slot came back").isEqualTo(201);
        }
        tenant = tenantA;
    }

    @Test
    void aRequestWaitingForAKeyGivesItsTurnUpWhileItWaits() throws Exception {
        Api.Response held = acquire(writer("alice"), "k", "job", "a", 60);
        Map<String, Object> waitingBody = new HashMap<>(Api.acquireBody("k", "job", "b", 60));
        waitingBody.put("waitSeconds", 20);
        CompletableFuture<Api.Response> waiting = CompletableFuture.supplyAsync(
                () -> api.post("/v1/leases", writer("bob"), waitingBody), clients);
        await().atMost(Duration.ofSeconds(10)).until(() -> waiters.count() == 1);

        // The instance's only slot is free while bob waits: alice's release is served at once, not refused after 1 s.
        Api.Response released = release(writer("alice"), held.body().get("leaseId").asString(),
                held.body().get("fencingToken").asLong());
        assertThat(released.status()).isEqualTo(200);

        Api.Response granted = waiting.get(20, TimeUnit.SECONDS);
        assertThat(granted.status()).as("the waiter took its slot back and was granted").isEqualTo(201);
        assertThat(granted.body().get("holder").asString()).isEqualTo("b");
    }

    private double refused() {
        return meters.get("leasekeeper.limits.refused").tag("limit", "queue-timeout").counter().count();
    }

    private long lockWaiters() {
        return jdbc.sql("""
                SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%lease%'
                """).query(Long.class).single();
    }
}
