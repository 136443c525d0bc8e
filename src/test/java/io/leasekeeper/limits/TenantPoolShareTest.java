package io.leasekeeper.limits;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

/**
 * One tenant holds at most its share of the pool (here half of the tests' 40 connections): while tenant A's
 * requests hold all of its connections (each waiting on a key's row lock that another session holds) and more of
 * A's wait for them, tenant B is served from the connections A may not take, before any of A's requests has ended.
 * Without the share, A's requests (more than the pool) would hold every connection and B would get one only after
 * one of A's ended. No timeout ends A's waits here (30 s), so the order alone decides. A's requests in progress
 * are not bounded here (TenantTurnsTest bounds them): the share of the pool is what is tested.
 */
@TestPropertySource(properties = {"leasekeeper.limits.pool-share-per-tenant=0.5",
        "leasekeeper.limits.requests-in-progress-per-tenant=100",
        "spring.datasource.hikari.connection-timeout=30000",
        "spring.datasource.hikari.data-source-properties.options=-c lock_timeout=30s"})
class TenantPoolShareTest extends IntegrationTest {

    @Autowired
    DataSource dataSource;

    @Test
    void aTenantHoldingItsShareLeavesTheRestOfThePoolToOthers() throws Exception {
        TenantPoolShare share = (TenantPoolShare) dataSource;
        int permits = share.permits();
        assertThat(permits).isEqualTo(20);
        int flood = 45; // more than the whole pool
        String tenantA = tenant;
        String alice = writer("alice");
        var lease = acquire(alice, "nightly", "report", "pod-1", 60).body();
        String renew = "/v1/leases/" + lease.get("leaseId").asString() + "/renew";
        var token = java.util.Map.of("fencingToken", lease.get("fencingToken").asLong());

        TestDatabase.Connection db = TestDatabase.connection();
        ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor();
        try (Connection blocker = DriverManager.getConnection(db.url(), db.username(), db.password())) {
            blocker.setAutoCommit(false);
            try (PreparedStatement lock = blocker.prepareStatement("SELECT 1 FROM lease_key WHERE tenant = ? FOR UPDATE")) {
                lock.setString(1, tenantA);
                assertThat(lock.executeQuery().next()).isTrue();
            }
            List<CompletableFuture<Api.Response>> requests = new ArrayList<>();
            for (int i = 0; i < flood; i++) {
                requests.add(CompletableFuture.supplyAsync(() -> api.post(renew, alice, token), clients));
            }
            // A's share of renewals hold A's connections, waiting on the lock; the others wait for those.
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> lockWaiters() == permits && share.waiting(tenantA) == flood - permits);

            tenant = "t-other-" + tenantA;
            Api.Response other = acquire(writer("bob"), "nightly", "report", "pod-2", 60);
            long endedMeanwhile = requests.stream().filter(CompletableFuture::isDone).count();
            blocker.rollback();

            assertThat(other.status()).as("tenant B served").isEqualTo(201);
            assertThat(endedMeanwhile).as("while every request of A was still waiting").isZero();
            for (CompletableFuture<Api.Response> request : requests) {
                assertThat(request.get().status()).as("every request of A renews once the lock is gone").isEqualTo(200);
            }
        } finally {
            clients.shutdownNow();
        }
    }

    private long lockWaiters() {
        return jdbc.sql("""
                SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%lease%'
                """).query(Long.class).single();
    }
}
