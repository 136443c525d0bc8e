package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.key.LeaseKey;
import io.leasekeeper.key.Target;
import io.leasekeeper.key.TargetType;
import io.leasekeeper.security.Caller;
import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * A waiting acquire whose client hung up takes nothing, however its hang-up and the key's release interleave
 * (contract 1.1: a waiter that gives up changes nothing). The release offers the key to the first waiting row; only
 * the waiting request itself grants it, having just looked at its client. Each order of the race is made here with
 * latches on the request's look at its client and with the database's own view of who waits for a lock: the
 * client is a stand-in whose answers the test gives.
 */
class HungUpWaiterTest extends IntegrationTest {

    @Autowired
    Waiting waiting;

    private final ExecutorService requests = Executors.newVirtualThreadPerTaskExecutor();

    @AfterEach
    void stopRequests() {
        requests.shutdownNow();
    }

    /** A client the test hangs up; once {@code holdNextLook}, the request's next look at it waits for the test. */
    private static final class Client implements BooleanSupplier {
        final CountDownLatch looking = new CountDownLatch(1);
        final CountDownLatch answer = new CountDownLatch(1);
        volatile boolean holdNextLook;
        volatile boolean hungUp;

        @Override
        public boolean getAsBoolean() {
            if (holdNextLook) {
                holdNextLook = false;
                looking.countDown();
                try {
                    answer.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return hungUp;
        }
    }

    private static final BooleanSupplier STAYS = () -> false;

    @Test
    void aClientThatHangsUpWhileTheKeyIsOfferedToItIsGrantedNothingAndTheKeyGoesToTheNextWaiter() throws Exception {
        Api.Response held = acquire(writer("alice"), "k", "job", "a", 60);
        Client bobsClient = new Client();
        CompletableFuture<LeaseOutcome> bob = waitFor("bob", bobsClient);
        awaitQueueRows(1);
        CompletableFuture<LeaseOutcome> carol = waitFor("carol", STAYS);
        awaitQueueRows(2);

        bobsClient.holdNextLook = true;
        assertThat(release(writer("alice"), id(held), token(held)).status()).isEqualTo(200);
        // The release offered the key to bob's row; bob's request looks at its client before it takes it (or is in
        // the look it makes every second, begun before the offer: the offer waits for it all the same).
        assertThat(bobsClient.looking.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(activeOwners()).as("while the key is offered, nobody holds it").isEmpty();
        assertThat(offeredTo()).containsExactly("bob");

        bobsClient.hungUp = true;
        bobsClient.answer.countDown();

        assertTheKeyWentTo(carol, bob);
    }

    @Test
    void aClientThatHangsUpAsTheKeyIsOfferedToItPassesTheOfferOnToTheNextWaiter() throws Exception {
        Api.Response held = acquire(writer("alice"), "k", "job", "a", 60);
        Client bobsClient = new Client();
        CompletableFuture<LeaseOutcome> bob = waitFor("bob", bobsClient);
        awaitQueueRows(1);
        CompletableFuture<LeaseOutcome> carol = waitFor("carol", STAYS);
        awaitQueueRows(2);

        // An admin's revoke (one transaction under the key's lock) takes the lock first and offers the key to bob's
        // row; bob's request, which has seen its client gone, waits behind it to leave the queue, then passes the
        // offer on. PostgreSQL grants a row's lock to its waiters in the order they came.
        try (Connection test = lockedKey(held)) {
            CompletableFuture<Api.Response> revoke = CompletableFuture.supplyAsync(
                    () -> revoke(admin("root"), id(held), "hung-up race"), requests);
            awaitLockWaits(1);
            bobsClient.hungUp = true; // seen by bob's next look, within a second
            awaitLockWaits(2);
            test.commit();
            assertThat(revoke.get(10, TimeUnit.SECONDS).status()).isEqualTo(200);
        }

        assertTheKeyWentTo(carol, bob);
    }

    @Test
    void aClientThatHangsUpBeforeTheKeyIsReleasedHasLeftTheQueueAndTheLastWaiterLeavesTheKeyFree() throws Exception {
        Api.Response held = acquire(writer("alice"), "k", "job", "a", 60);
        Client bobsClient = new Client();
        CompletableFuture<LeaseOutcome> bob = waitFor("bob", bobsClient);
        awaitQueueRows(1);

        // Bob's request sees its client gone and takes the key's lock first to leave the queue; the release waits.
        try (Connection test = lockedKey(held)) {
            bobsClient.hungUp = true;
            awaitLockWaits(1);
            CompletableFuture<Api.Response> release = CompletableFuture.supplyAsync(
                    () -> release(writer("alice"), id(held), token(held)), requests);
            awaitLockWaits(2);
            test.commit();
            assertThat(release.get(10, TimeUnit.SECONDS).status()).isEqualTo(200);
        }

        assertThat(bob.get(10, TimeUnit.SECONDS)).isInstanceOf(LeaseOutcome.Held.class);
        assertThat(activeOwners()).as("no one waits: the key is free").isEmpty();
        assertThat(ownersEver()).containsExactly("alice");
        assertThat(queueRows()).isZero();
    }

    /** Carol took the key; bob's request answered its last try (which no one reads), and no lease was ever his. */
    private void assertTheKeyWentTo(CompletableFuture<LeaseOutcome> carol, CompletableFuture<LeaseOutcome> bob)
            throws Exception {
        assertThat(carol.get(10, TimeUnit.SECONDS)).isInstanceOf(LeaseOutcome.Granted.class);
        assertThat(bob.get(10, TimeUnit.SECONDS)).isInstanceOf(LeaseOutcome.Held.class);
        assertThat(activeOwners()).containsExactly("carol");
        assertThat(ownersEver()).as("every lease the key ever had").containsExactly("alice", "carol");
        assertThat(queueRows()).isZero();
    }

    /** A waiting acquire of the key "k" by {@code owner}, for 20 s, as the controller makes it, with this client. */
    private CompletableFuture<LeaseOutcome> waitFor(String owner, BooleanSupplier client) {
        AcquireCommand command = new AcquireCommand(new LeaseKey(tenant, LeaseKey.DEFAULT_PROGRAM,
                new Target(TargetType.OPAQUE, "k"), "job", null), owner, 30, 3600, 0, 20, null, null, Metadata.EMPTY);
        Caller caller = new Caller(tenant, owner, "req-" + owner, null);
        return CompletableFuture.supplyAsync(() -> waiting.acquire(command, caller, null, System.nanoTime(), client),
                requests);
    }

    private void awaitQueueRows(long rows) {
        await().atMost(Duration.ofSeconds(10)).until(() -> queueRows() == rows);
    }

    private long queueRows() {
        return jdbc.sql("SELECT count(*) FROM lease_waiter WHERE tenant = :t").param("t", tenant).query(Long.class)
                .single();
    }

    private List<String> offeredTo() {
        return jdbc.sql("SELECT owner FROM lease_waiter WHERE tenant = :t AND offered_until > now()")
                .param("t", tenant).query(String.class).list();
    }

    private List<String> activeOwners() {
        return jdbc.sql("SELECT owner FROM lease WHERE tenant = :t AND state = 'active'").param("t", tenant)
                .query(String.class).list();
    }

    private List<String> ownersEver() {
        return jdbc.sql("SELECT owner FROM lease WHERE tenant = :t ORDER BY fencing_token").param("t", tenant)
                .query(String.class).list();
    }

    private static String id(Api.Response lease) {
        return lease.body().get("leaseId").asString();
    }

    private static long token(Api.Response lease) {
        return lease.body().get("fencingToken").asLong();
    }

    /** A connection of the test's own, in a transaction holding the lock of the lease's key until the test ends it. */
    private static Connection lockedKey(Api.Response lease) throws java.sql.SQLException {
        TestDatabase.Connection db = TestDatabase.connection();
        Connection connection = DriverManager.getConnection(db.url(), db.username(), db.password());
        connection.setAutoCommit(false);
        try (PreparedStatement lock = connection.prepareStatement(
                "SELECT k.id FROM lease l JOIN lease_key k ON k.id = l.key_id WHERE l.id = CAST(? AS uuid)"
                        + " FOR NO KEY UPDATE OF k")) {
            lock.setString(1, id(lease));
            lock.executeQuery().close();
        }
        return connection;
    }

    /** Until this many other sessions wait for a lock on this tenant's rows, as the database sees it. */
    private void awaitLockWaits(long sessions) {
        await().atMost(Duration.ofSeconds(10)).until(() -> jdbc.sql("""
                SELECT count(*) FROM pg_stat_activity
                WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid() AND datname = current_database()""")
                .query(Long.class).single() >= sessions);
    }
}
