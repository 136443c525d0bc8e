package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.security.Caller;
import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.TestDatabase;
import io.leasekeeper.key.LeaseKey;
import io.leasekeeper.key.Target;
import io.leasekeeper.key.TargetType;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
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
        queue(waiterId, keyId, null);
        AcquireCommand command = bobsCommand();
        Caller bob = new Caller(tenant, "bob", "req-1", null);

        try (Connection release = transaction()) {
            try (PreparedStatement lock = release.prepareStatement(
                    "SELECT id FROM lease_key WHERE id = ? FOR NO KEY UPDATE")) {
                lock.setLong(1, keyId);
                lock.executeQuery().close();
            }
            CompletableFuture<LeaseOutcome> leaving = CompletableFuture.supplyAsync(() ->
                    operations.acquire(command, bob, LeaseStore.Try.LAST, waiterId, null));
            // The leaving request now waits for a lock the release holds.
            awaitALockWaitIn("lease_acquire");

            // The release touches the waiting row under the key's lock, as a hand-over's offer does: it must not wait.
            try (PreparedStatement handOver = release.prepareStatement(
                    "UPDATE lease_waiter SET wait_until = wait_until WHERE id = ?")) {
                handOver.setQueryTimeout(5);
                handOver.setObject(1, waiterId);
                assertThat(handOver.executeUpdate()).isEqualTo(1);
            }
            release.commit();

            LeaseOutcome left = leaving.get(10, TimeUnit.SECONDS);
            assertThat(left).isInstanceOf(LeaseOutcome.Held.class);
        }
        assertThat(jdbc.sql("SELECT count(*) FROM lease_waiter WHERE id = :id").param("id", waiterId)
                .query(Long.class).single()).isZero();
    }

    /**
     * A retry of a waiting acquire takes over its first request's row (a new id, without the key's lock) while a
     * release offers the key to that row. The hand-over locks the row before offering: it waits for the takeover,
     * then offers the key to the row under its new id, which the retry takes. Found by the fencing harness as a 500
     * ("changed while its key was locked") when a hand-over granted the key: it read the row, granted a lease, and
     * then updated no row, whose id had changed, so the key was held by a lease no one was told of.
     */
    @Test
    void aHandOverToARowThatARetryTakesOverOffersTheKeyToTheRowUnderItsNewId() throws Exception {
        Api.Response held = acquire(writer("alice"), "k", "job", "a", 60);
        String heldId = held.body().get("leaseId").asString();
        long keyId = jdbc.sql("SELECT key_id FROM lease WHERE id = CAST(:id AS uuid)").param("id", heldId)
                .query(Long.class).single();
        jdbc.sql("UPDATE lease_key SET watched_until = lease_now() + interval '60 seconds' WHERE id = :keyId")
                .param("keyId", keyId).update();
        UUID firstRequest = UUID.randomUUID();
        UUID retry = UUID.randomUUID();
        queue(firstRequest, keyId, "bob-1");

        try (Connection takeover = transaction()) {
            try (PreparedStatement takeOver = takeover.prepareStatement(
                    "UPDATE lease_waiter SET id = ?, wait_until = wait_until WHERE id = ?")) {
                takeOver.setObject(1, retry);
                takeOver.setObject(2, firstRequest);
                assertThat(takeOver.executeUpdate()).isEqualTo(1);
            }
            CompletableFuture<Api.Response> release = CompletableFuture.supplyAsync(() ->
                    release(writer("alice"), heldId, held.body().get("fencingToken").asLong()));
            // The release, holding the key, now waits for the row the retry holds.
            awaitALockWaitIn("lease_end");
            takeover.commit();

            assertThat(release.get(10, TimeUnit.SECONDS).status()).isEqualTo(200);
        }
        assertThat(jdbc.sql("SELECT count(*) FROM lease WHERE key_id = :keyId AND state = 'active'")
                .param("keyId", keyId).query(Long.class).single()).as("active leases while the key is offered").isZero();
        assertThat(jdbc.sql("SELECT offered_until IS NOT NULL FROM lease_waiter WHERE id = :id").param("id", retry)
                .query(Boolean.class).single()).as("the row offered the key, under the retry's id").isTrue();

        LeaseOutcome taken = operations.acquire(bobsCommand(), new Caller(tenant, "bob", "req-2", null),
                LeaseStore.Try.AGAIN, retry, null);
        assertThat(taken).isInstanceOf(LeaseOutcome.Granted.class);
        List<String> active = jdbc.sql("SELECT owner FROM lease WHERE key_id = :keyId AND state = 'active'")
                .param("keyId", keyId).query(String.class).list();
        assertThat(active).as("the key's active leases' owners").containsExactly("bob");
        assertThat(jdbc.sql("SELECT count(*) FROM lease_waiter WHERE key_id = :keyId").param("keyId", keyId)
                .query(Long.class).single()).as("rows left in the queue").isZero();
    }

    private AcquireCommand bobsCommand() {
        return new AcquireCommand(new LeaseKey(tenant, LeaseKey.DEFAULT_PROGRAM, new Target(TargetType.OPAQUE, "k"),
                "job", null), "b", 30, 3600, 0, 5, null, null, Metadata.EMPTY);
    }

    /** Bob's waiting acquire in the key's queue, with an Idempotency-Key or none. */
    private void queue(UUID waiterId, long keyId, String idempotencyKey) {
        jdbc.sql("""
                INSERT INTO lease_waiter (id, key_id, wait_until, tenant, owner, holder, ttl_seconds,
                                          max_lifetime_seconds, lock_delay_seconds, metadata, idempotency_key,
                                          fingerprint)
                VALUES (:id, :keyId, lease_now() + interval '30 seconds', :tenant, 'bob', 'b', 30, 3600, 0, '{}',
                        CAST(:idempotencyKey AS text), CASE WHEN CAST(:idempotencyKey AS text) IS NOT NULL THEN 'fp' END)
                """).param("id", waiterId).param("keyId", keyId).param("tenant", tenant)
                .param("idempotencyKey", idempotencyKey).update();
    }

    /** A connection of the test's own, in a transaction the test ends. */
    private static Connection transaction() throws java.sql.SQLException {
        TestDatabase.Connection db = TestDatabase.connection();
        Connection connection = DriverManager.getConnection(db.url(), db.username(), db.password());
        connection.setAutoCommit(false);
        return connection;
    }

    /** Until another session waits for a row lock in a statement on {@code table}, as the database sees it. */
    private void awaitALockWaitIn(String table) {
        await().atMost(Duration.ofSeconds(10)).until(() -> jdbc.sql("""
                SELECT count(*) FROM pg_stat_activity
                WHERE wait_event_type = 'Lock' AND query LIKE '%' || :table || '%' AND pid <> pg_backend_pid()""")
                .param("table", table).query(Long.class).single() >= 1);
    }
}
