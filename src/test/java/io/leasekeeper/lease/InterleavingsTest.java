package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.security.Caller;
import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.TestDatabase;
import io.leasekeeper.sweeper.LeaseSweeper;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Two transitions that race on one key, in both orders, forced rather than hoped for. Every transition takes the
 * key's row lock first, so a session of the test's own that holds that lock (a gate) makes the requests queue on it
 * in the order they arrive, as the database shows them waiting; when the gate commits, they run in that order. The
 * sweeper skips a locked key instead of waiting for it, so it is put first by running its batch in the test's
 * session, paused before its commit, and second by sweeping while a request waits behind the gate. A waiting request
 * that leaves the queue takes the key's lock too (lease_leave_queue), and queues behind the gate the same way. Nothing
 * sleeps:
 * each step waits for the database to show what it needs.
 */
class InterleavingsTest extends IntegrationTest {

    @Autowired
    LeaseSweeper sweeper;

    @Autowired
    LeaseOperations operations;

    @Test
    void ofTwoAcquiresOfAFreeKeyTheFirstToReachItsLockGetsItAndTheOtherIsToldWhoHoldsIt() throws Exception {
        for (boolean aliceFirst : List.of(true, false)) {
            String target = "k-" + aliceFirst;
            Api.Response earlier = acquire(writer("carol"), target, "job", "c", 60);
            assertThat(release(writer("carol"), id(earlier), token(earlier)).status()).isEqualTo(200);

            try (Gate gate = Gate.onKeyOf(id(earlier), jdbc)) {
                String first = aliceFirst ? "alice" : "bob";
                String second = aliceFirst ? "bob" : "alice";
                CompletableFuture<Api.Response> firstAsks = gate.queue(() -> acquire(writer(first), target, "job", first, 60));
                CompletableFuture<Api.Response> secondAsks = gate.queue(() -> acquire(writer(second), target, "job", second, 60));
                gate.open();

                Api.Response granted = firstAsks.get(10, TimeUnit.SECONDS);
                Api.Response busy = secondAsks.get(10, TimeUnit.SECONDS);
                assertThat(granted.status()).as(first + " asked first").isEqualTo(201);
                assertThat(granted.body().get("owner").asString()).isEqualTo(first);
                assertThat(token(granted)).isGreaterThan(token(earlier));
                assertThat(busy.status()).isEqualTo(409);
                assertThat(busy.code()).isEqualTo("LEASE_HELD");
                assertThat(busy.body().get("holder").get("owner").asString()).isEqualTo(first);
            }
        }
    }

    @Test
    void aReleaseAndARevokeOfOneLeaseEndItOnceWhicheverComesFirst() throws Exception {
        for (boolean releaseFirst : List.of(true, false)) {
            Api.Response held = acquire(writer("alice"), "k-" + releaseFirst, "job", "a", 60);
            String id = id(held);
            Supplier<Api.Response> releasing = () -> release(writer("alice"), id, token(held));
            Supplier<Api.Response> revoking = () -> revoke(admin("root"), id, "maintenance");

            try (Gate gate = Gate.onKeyOf(id, jdbc)) {
                CompletableFuture<Api.Response> first = gate.queue(releaseFirst ? releasing : revoking);
                CompletableFuture<Api.Response> second = gate.queue(releaseFirst ? revoking : releasing);
                gate.open();

                assertThat(first.get(10, TimeUnit.SECONDS).status()).isEqualTo(200);
                Api.Response refused = second.get(10, TimeUnit.SECONDS);
                if (releaseFirst) {
                    assertThat(refused.status()).isEqualTo(409);
                    assertThat(refused.code()).isEqualTo("LEASE_NOT_ACTIVE");
                } else {
                    assertThat(refused.status()).isEqualTo(410);
                    assertThat(refused.code()).isEqualTo("LEASE_REVOKED");
                }
            }
            assertThat(eventTypes(id)).containsExactly("ACQUIRED", releaseFirst ? "RELEASED" : "REVOKED");
        }
    }

    @Test
    void aRenewAfterTheSweeperExpiredTheLeaseIsRefusedAndOneQueuedWhileItSweepsIsRefusedToo() throws Exception {
        // The sweeper first: its batch holds the key, expired, until it commits; the renew waits, then finds it ended.
        Api.Response swept = acquire(writer("alice"), "swept", "job", "a", 60);
        backdateExpiry(id(swept));
        try (Gate sweeping = Gate.sweeping(tenant, jdbc)) {
            CompletableFuture<Api.Response> renew = sweeping.queue(() -> renew(writer("alice"), id(swept), token(swept)));
            sweeping.open();
            assertThat(renew.get(10, TimeUnit.SECONDS).code()).isEqualTo("LEASE_EXPIRED");
        }
        assertThat(eventTypes(id(swept))).containsExactly("ACQUIRED", "EXPIRED");

        // The renew first: it waits for the key while the sweeper passes over it, locked; the renew is refused
        // (an expiry is never revived) and the next sweep records the expiry, once.
        Api.Response renewed = acquire(writer("alice"), "renewed", "job", "a", 60);
        backdateExpiry(id(renewed));
        try (Gate gate = Gate.onKeyOf(id(renewed), jdbc)) {
            CompletableFuture<Api.Response> renew = gate.queue(() -> renew(writer("alice"), id(renewed), token(renewed)));
            assertThat(sweeper.sweepOnce(tenant)).as("a locked key is skipped, not waited for").isZero();
            gate.open();
            assertThat(renew.get(10, TimeUnit.SECONDS).code()).isEqualTo("LEASE_EXPIRED");
        }
        assertThat(sweeper.sweepOnce(tenant)).isOne();
        assertThat(eventTypes(id(renewed))).containsExactly("ACQUIRED", "EXPIRED");
    }

    @Test
    void anAcquireOfAKeyWhoseLeaseExpiredGetsItWhetherTheSweeperOrTheAcquireRecordsTheExpiry() throws Exception {
        // The sweeper first, paused before its commit: the acquire waits, then finds the key free.
        Api.Response swept = acquire(writer("alice"), "swept", "job", "a", 60);
        backdateExpiry(id(swept));
        try (Gate sweeping = Gate.sweeping(tenant, jdbc)) {
            CompletableFuture<Api.Response> bob = sweeping.queue(() -> acquire(writer("bob"), "swept", "job", "b", 60));
            sweeping.open();
            Api.Response granted = bob.get(10, TimeUnit.SECONDS);
            assertThat(granted.status()).isEqualTo(201);
            assertThat(token(granted)).isGreaterThan(token(swept));
        }
        assertThat(principalsOf(id(swept), "EXPIRED")).containsExactly("system:sweeper");

        // The acquire first: the sweeper passes over the locked key; the acquire records the expiry and takes it.
        Api.Response expired = acquire(writer("alice"), "expired", "job", "a", 60);
        backdateExpiry(id(expired));
        try (Gate gate = Gate.onKeyOf(id(expired), jdbc)) {
            CompletableFuture<Api.Response> bob = gate.queue(() -> acquire(writer("bob"), "expired", "job", "b", 60));
            assertThat(sweeper.sweepOnce(tenant)).as("a locked key is skipped, not waited for").isZero();
            gate.open();
            Api.Response granted = bob.get(10, TimeUnit.SECONDS);
            assertThat(granted.status()).isEqualTo(201);
            assertThat(token(granted)).isGreaterThan(token(expired));
        }
        assertThat(sweeper.sweepOnce(tenant)).isZero();
        assertThat(principalsOf(id(expired), "EXPIRED")).containsExactly("system:acquire");
    }

    /**
     * A release that hands the key to the first waiting row, and that row's request leaving the queue because its
     * client has gone (lease_leave_queue), in both orders: the key is never left with the row that left. Released
     * first, the key is offered to bob's row, and his leaving passes the offer on to carol's; bob leaving first, the
     * release offers it to carol's at once. Either way carol's row holds the offer and no lease is made.
     */
    @Test
    void aHandOverAndADisconnectOfTheFirstWaiterLeaveTheKeyOfferedToTheNextWhicheverComesFirst() throws Exception {
        for (boolean releaseFirst : List.of(true, false)) {
            String target = "handed-" + releaseFirst;
            Api.Response held = acquire(writer("alice"), target, "job", "a", 60);
            long keyId = jdbc.sql("SELECT key_id FROM lease WHERE id = CAST(:id AS uuid)").param("id", id(held))
                    .query(Long.class).single();
            jdbc.sql("UPDATE lease_key SET watched_until = lease_now() + interval '60 seconds' WHERE id = :keyId")
                    .param("keyId", keyId).update();
            UUID bob = waitingRow(keyId, "bob");
            UUID carol = waitingRow(keyId, "carol");
            Supplier<Object> releasing = () -> release(writer("alice"), id(held), token(held)).status();
            Supplier<Object> leaving = () -> {
                operations.abandonQueue(bob, new Caller(tenant, "bob", "req-gone", null));
                return "left";
            };

            try (Gate gate = Gate.onKeyOf(id(held), jdbc)) {
                CompletableFuture<Object> first = gate.queue(releaseFirst ? releasing : leaving);
                CompletableFuture<Object> second = gate.queue(releaseFirst ? leaving : releasing);
                gate.open();
                first.get(10, TimeUnit.SECONDS);
                second.get(10, TimeUnit.SECONDS);
            }
            assertThat(jdbc.sql("SELECT CAST(id AS text) FROM lease_waiter WHERE key_id = :keyId AND offered_until IS NOT NULL")
                    .param("keyId", keyId).query(String.class).list()).as("rows offered the key, release first: "
                    + releaseFirst).containsExactly(carol.toString());
            assertThat(jdbc.sql("SELECT count(*) FROM lease_waiter WHERE id = :bob").param("bob", bob)
                    .query(Long.class).single()).as("bob's row").isZero();
            assertThat(jdbc.sql("SELECT count(*) FROM lease WHERE key_id = :keyId AND state = 'active'")
                    .param("keyId", keyId).query(Long.class).single()).as("active leases").isZero();
        }
    }

    /** A waiting acquire's row of {@code owner} in the key's queue, behind those written before. */
    private UUID waitingRow(long keyId, String owner) {
        UUID id = UUID.randomUUID();
        jdbc.sql("""
                INSERT INTO lease_waiter (id, key_id, wait_until, tenant, owner, holder, ttl_seconds,
                                          max_lifetime_seconds, lock_delay_seconds, metadata)
                VALUES (:id, :keyId, lease_now() + interval '30 seconds', :tenant, :owner, 'h', 30, 3600, 0, '{}')
                """).param("id", id).param("keyId", keyId).param("tenant", tenant).param("owner", owner).update();
        return id;
    }

    private List<String> principalsOf(String leaseId, String type) {
        return jdbc.sql("SELECT principal FROM lease_event WHERE lease_id = CAST(:id AS uuid) AND type = :type")
                .param("id", leaseId).param("type", type).query(String.class).list();
    }

    private static String id(Api.Response lease) {
        return lease.body().get("leaseId").asString();
    }

    private static long token(Api.Response lease) {
        return lease.body().get("fencingToken").asLong();
    }

    /**
     * A session of the test's own holding a key's row lock in an open transaction: requests for the key queue behind
     * it, each once the database shows it waiting, in the order they were queued; {@link #open} commits, and they run
     * in that order (PostgreSQL grants a row's lock to its waiters first come, first served).
     */
    private static final class Gate implements AutoCloseable {

        private final Connection session;
        private final JdbcClient observer;
        private int queued;

        private Gate(Connection session, JdbcClient observer) {
            this.session = session;
            this.observer = observer;
        }

        /** Holds the key of this lease, as a transition holds it. */
        static Gate onKeyOf(String leaseId, JdbcClient observer) throws SQLException {
            Gate gate = new Gate(transaction(), observer);
            try (PreparedStatement lock = gate.session.prepareStatement("""
                    SELECT k.id FROM lease l JOIN lease_key k ON k.tenant = l.tenant AND k.id = l.key_id
                    WHERE l.id = CAST(? AS uuid) FOR NO KEY UPDATE OF k""")) {
                lock.setString(1, leaseId);
                try (var rows = lock.executeQuery()) {
                    assertThat(rows.next()).as("lease " + leaseId).isTrue();
                }
            }
            return gate;
        }

        /** Runs one sweeper batch of the tenant and holds its keys, expired, until {@link #open}. */
        static Gate sweeping(String tenant, JdbcClient observer) throws SQLException {
            Gate gate = new Gate(transaction(), observer);
            try (PreparedStatement sweep = gate.session.prepareStatement("SELECT lease_expire_due(?, 100, NULL)")) {
                sweep.setString(1, tenant);
                try (var rows = sweep.executeQuery()) {
                    assertThat(rows.next()).isTrue();
                    assertThat(rows.getInt(1)).as("leases the batch expired").isOne();
                }
            }
            return gate;
        }

        /** Sends a request that waits behind the gate, once the database shows it waiting. */
        <T> CompletableFuture<T> queue(Supplier<T> request) {
            // a thread of its own: a request blocked behind the gate must not hold up the next one's start
            CompletableFuture<T> answer = CompletableFuture.supplyAsync(request, task -> Thread.ofVirtual().start(task));
            int waiting = ++queued;
            await().atMost(Duration.ofSeconds(10)).until(() -> lockWaiters() >= waiting);
            return answer;
        }

        void open() throws SQLException {
            session.commit();
        }

        /**
         * Sessions waiting for a lock, read outside the gate's transaction (a transaction sees pg_stat_activity as it
         * was when it first read it).
         */
        private long lockWaiters() {
            return observer.sql("""
                    SELECT count(*) FROM pg_stat_activity
                    WHERE datname = current_database() AND wait_event_type = 'Lock'""").query(Long.class).single();
        }

        @Override
        public void close() throws SQLException {
            session.rollback();
            session.close();
        }

        private static Connection transaction() throws SQLException {
            TestDatabase.Connection db = TestDatabase.connection();
            Connection connection = DriverManager.getConnection(db.url(), db.username(), db.password());
            connection.setAutoCommit(false);
            return connection;
        }
    }
}
