package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.TestDatabase;
import io.leasekeeper.wait.FreedKeys;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.springframework.dao.DataAccessException;

/**
 * {@code lease_end}, the one function that releases and revokes, in the cases the contract suite does not reach: a
 * revoke that starts a lock-delay on a key someone waits for offers it to no one (the hand-over holds back a key in
 * its lock-delay; a release would offer it to the waiting request) and notifies its waiters, who try when it ends; and a call that names no end at all is refused, whatever lease it names.
 */
class LeaseEndTest extends IntegrationTest {

    @Test
    void aRevokeThatStartsALockDelayOnAWatchedKeyNotifiesItsWaitersInsteadOfHandingItOver() throws Exception {
        Map<String, Object> body = new HashMap<>(Api.acquireBody("delayed", "job", "h", 60));
        body.put("lockDelaySeconds", 30);
        Api.Response held = api.post("/v1/leases", writer("alice"), body);
        assertThat(held.status()).as(held.raw()).isEqualTo(201);
        String id = held.body().get("leaseId").asString();
        long keyId = jdbc.sql("SELECT key_id FROM lease WHERE id = CAST(:id AS uuid)").param("id", id)
                .query(Long.class).single();
        jdbc.sql("UPDATE lease_key SET watched_until = lease_now() + interval '1 minute' WHERE id = :key")
                .param("key", keyId).update();
        UUID waiter = UUID.randomUUID();
        jdbc.sql("""
                INSERT INTO lease_waiter (id, key_id, wait_until, tenant, owner, holder, ttl_seconds,
                                          max_lifetime_seconds, lock_delay_seconds, metadata)
                VALUES (:id, :key, lease_now() + interval '30 seconds', :tenant, 'bob', 'b', 30, 3600, 0, '{}')
                """).param("id", waiter).param("key", keyId).param("tenant", tenant).update();

        TestDatabase.Connection db = TestDatabase.connection();
        try (Connection listener = DriverManager.getConnection(db.url(), db.username(), db.password())) {
            listener.createStatement().execute("LISTEN " + FreedKeys.CHANNEL);
            Api.Response revoked = revoke(admin("root"), id, "maintenance");
            assertThat(revoked.status()).as(revoked.raw()).isEqualTo(200);

            PGNotification[] notified = listener.unwrap(PGConnection.class).getNotifications(10_000);
            assertThat(notified).as("notifications of freed keys").isNotNull()
                    .extracting(PGNotification::getParameter).contains(Long.toString(keyId));
        }
        assertThat(jdbc.sql("SELECT delayed_until > lease_now() FROM lease_key WHERE id = :key").param("key", keyId)
                .query(Boolean.class).single()).as("the key's lock-delay runs").isTrue();
        assertThat(jdbc.sql("SELECT offered_until IS NULL FROM lease_waiter WHERE id = :id").param("id", waiter)
                .query(Boolean.class).single()).as("the waiting request is not offered a delayed key").isTrue();
        jdbc.sql("DELETE FROM lease_waiter WHERE id = :id").param("id", waiter).update();
    }

    @Test
    void anEndThatIsNeitherAReleaseNorARevokeIsRefused() {
        assertThatThrownBy(() -> jdbc.sql("""
                SELECT * FROM lease_end(:tenant, ROW(:lease, 'expired', 'alice', 1, 'expired', NULL, NULL)::lease_end_request, 5, NULL)""")
                .param("tenant", tenant).param("lease", UUID.randomUUID()).query().singleRow())
                .isInstanceOf(DataAccessException.class).hasMessageContaining("expired is not an end");
    }
}
