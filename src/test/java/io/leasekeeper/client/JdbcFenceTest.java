package io.leasekeeper.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.TestDatabase;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The store's half of fencing against PostgreSQL (the application's own tables, in a database of their own as a
 * downstream store's are: beside the service's, a later LeaseSchemaRulesTest found the fence's key without a
 * tenant): a write commits only under a token at least the largest seen for its key, and a holder that does not
 * know it has been superseded is refused by the store.
 */
class JdbcFenceTest extends IntegrationTest {

    /** The downstream store's database, made once for the class. */
    private static String store;

    @AfterAll
    static void dropStore() {
        if (store != null) {
            TestDatabase.dropDatabase(store);
            store = null;
        }
    }

    private static final LeaseKey KEY = LeaseKey.of(Target.opaque("ledger"), "poster");

    @BeforeEach
    void tables() throws SQLException {
        try (Connection c = connect()) {
            JdbcFence.createTable(c);
            c.createStatement().execute("CREATE TABLE IF NOT EXISTS fenced_note (lease_key text, token bigint, note text)");
        }
    }

    @Test
    void aTokenIsAdmittedWhenAtLeastTheLargestSeenForItsKey() throws SQLException {
        String key = tenant + "/ledger";
        assertThat(admitted(key, 5)).isTrue();
        assertThat(admitted(key, 7)).isTrue();
        assertThat(admitted(key, 6)).as("smaller than 7").isFalse();
        assertThat(admitted(key, 7)).as("the same holder writing again").isTrue();
        assertThat(admitted(tenant + "/other", 1)).as("another key has its own largest token").isTrue();
        try (Connection c = connect()) {
            assertThatThrownBy(() -> JdbcFence.admit(c, key, 8)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("auto-commit");
        }
    }

    @Test
    void aSmallerTokenArrivingWhileALargerOnesWriteIsOpenWaitsForItAndIsRefused() throws Exception {
        String key = tenant + "/ledger";
        try (Connection newer = connect()) {
            newer.setAutoCommit(false);
            assertThat(JdbcFence.admit(newer, key, 9)).isTrue();
            CompletableFuture<Boolean> older = CompletableFuture.supplyAsync(() -> {
                try {
                    return admitted(key, 8);
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            await().atMost(Duration.ofSeconds(10)).until(() -> jdbc.sql("""
                    SELECT count(*) FROM pg_stat_activity
                    WHERE wait_event_type = 'Lock' AND query LIKE '%leasekeeper_fence%'""").query(Long.class).single() == 1);
            assertThat(older).isNotDone();

            newer.commit();

            assertThat(older.get(10, TimeUnit.SECONDS)).isFalse();
        }
    }

    @Test
    void aHolderThatDoesNotKnowItWasSupersededIsRefusedByTheStore() throws Exception {
        LeasekeeperClient alice = client(writer("alice"));
        // No watch, a 60 s TTL: nothing tells the first holder of the revoke before its next renewal, 20 s away.
        HeldLease first = alice.hold(AcquireRequest.of(KEY, "pod-1", 60), HoldOptions.defaults().withWatch(false));
        try (Connection c = connect()) {
            int written = JdbcFence.write(c, first, conn -> note(conn, first, "first, before"));
            assertThat(written).isEqualTo(1);
        }
        client(admin("root")).revoke(first.leaseId(), "taken over");
        try (HeldLease second = alice.hold(AcquireRequest.of(KEY, "pod-2", 60), HoldOptions.defaults());
             Connection c = connect()) {
            int written = JdbcFence.write(c, second, conn -> note(conn, second, "second"));
            assertThat(written).isEqualTo(1);

            first.checkValid(); // it still believes it holds the lease
            assertThatThrownBy(() -> JdbcFence.write(c, first, conn -> note(conn, first, "first, stale")))
                    .isInstanceOf(JdbcFence.StaleTokenException.class);
            assertThat(c.getAutoCommit()).isTrue();
        }
        List<String> notes = new ArrayList<>();
        try (Connection c = connect();
             PreparedStatement read = c.prepareStatement("SELECT note FROM fenced_note WHERE lease_key = ? ORDER BY token")) {
            read.setString(1, first.key());
            var rows = read.executeQuery();
            while (rows.next()) {
                notes.add(rows.getString(1));
            }
        }
        assertThat(notes).containsExactly("first, before", "second");
        first.close();
    }

    private boolean admitted(String key, long token) throws SQLException {
        try (Connection c = connect()) {
            c.setAutoCommit(false);
            boolean admitted = JdbcFence.admit(c, key, token);
            c.commit();
            return admitted;
        }
    }

    private static int note(Connection c, HeldLease lease, String note) throws SQLException {
        try (PreparedStatement insert = c.prepareStatement("INSERT INTO fenced_note VALUES (?, ?, ?)")) {
            insert.setString(1, lease.key());
            insert.setLong(2, lease.fencingToken());
            insert.setString(3, note);
            return insert.executeUpdate();
        }
    }

    private LeasekeeperClient client(String token) {
        return LeasekeeperClient.builder(URI.create("http://127.0.0.1:" + port)).token(token).build();
    }

    private static synchronized Connection connect() throws SQLException {
        if (store == null) {
            store = TestDatabase.newDatabase("downstream_store");
        }
        TestDatabase.Connection db = TestDatabase.connection();
        return DriverManager.getConnection(store, db.username(), db.password());
    }
}
