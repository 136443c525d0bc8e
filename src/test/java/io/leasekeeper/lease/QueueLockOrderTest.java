package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.security.Caller;
import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.TestDatabase;
import io.leasekeeper.target.LeaseKey;
import io.leasekeeper.target.Target;
import io.leasekeeper.target.TargetType;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * A waiting acquire that leaves its key's queue (its deadline, a shutdown) takes the key's lock before its
 * row's, as a hand-over does (it updates the row under the key's lock). Found by the fencing harness as a
 * deadlock: the leaving request had deleted its row and waited for the key, while a release held the key and
 * waited to hand it to that row. Ordered here by the database's own view of who waits for a lock.
 */
class QueueLockOrderTest extends IntegrationTest {

    @Autowired
    LeaseOperations operations;

    @Test
    void leavingTheQueueWaitsForTheKeyBeforeTouchingItsRowSoAHandOverToItCanFinish() throws Exception {
        Api.Response held = acquire(writer("alice"), "k", "job", "a", 60);
        long keyId = jdbc.sql("SELECT key_id FROM lease WHERE id = CAST(:id AS uuid)")
                .param("id", held.body().get("leaseId").asString()).query(Long.class).single();
        UUID waiterId = UUID.randomUUID();
        jdbc.sql("""
                INSERT INTO lease_waiter (id, key_id, wait_until, tenant, owner, holder, ttl_seconds,
                                          max_lifetime_seconds, lock_delay_seconds, metadata)
                VALUES (:id, :keyId, lease_now() + interval '30 seconds', :tenant, 'bob', 'b', 30, 3600, 0, '{}')
                """).param("id", waiterId).param("keyId", keyId).param("tenant", tenant).update();
        AcquireCommand command = new AcquireCommand(new LeaseKey(tenant, LeaseKey.DEFAULT_PROGRAM,
                new Target(TargetType.OPAQUE, "k"), "job", null), "b", 30, 3600, 0, 5, null, null, Metadata.EMPTY);
        Caller bob = new Caller(tenant, "bob", "req-1", null);

        TestDatabase.Connection db = TestDatabase.connection();
        try (Connection release = DriverManager.getConnection(db.url(), db.username(), db.password())) {
            release.setAutoCommit(false);
            try (PreparedStatement lock = release.prepareStatement(
                    "SELECT id FROM lease_key WHERE id = ? FOR NO KEY UPDATE")) {
                lock.setLong(1, keyId);
                lock.executeQuery().close();
            }
            CompletableFuture<AcquireResult> leaving = CompletableFuture.supplyAsync(() ->
                    operations.leaveQueue(command, bob, waiterId));
            // The leaving request now waits for a lock the release holds.
            await().atMost(Duration.ofSeconds(10)).until(() -> jdbc.sql("""
                    SELECT count(*) FROM pg_stat_activity
                    WHERE wait_event_type = 'Lock' AND query LIKE '%lease_key%' AND pid <> pg_backend_pid()""")
                    .query(Long.class).single() >= 1);

            // The release touches the waiting row under the key's lock, as a hand-over does: it must not wait.
            try (PreparedStatement handOver = release.prepareStatement(
                    "UPDATE lease_waiter SET wait_until = wait_until WHERE id = ?")) {
                handOver.setQueryTimeout(5);
                handOver.setObject(1, waiterId);
                assertThat(handOver.executeUpdate()).isEqualTo(1);
            }
            release.commit();

            AcquireResult left = leaving.get(10, TimeUnit.SECONDS);
            assertThat(left).isInstanceOf(AcquireResult.Held.class);
        }
        assertThat(jdbc.sql("SELECT count(*) FROM lease_waiter WHERE id = :id").param("id", waiterId)
                .query(Long.class).single()).isZero();
    }
}
