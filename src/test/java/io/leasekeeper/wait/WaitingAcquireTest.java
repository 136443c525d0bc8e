package io.leasekeeper.wait;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;
import io.leasekeeper.support.Api;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * Contract 1.1, "Waiting acquire": a waiter is granted as soon as the key is freed (release, revoke, expiry
 * by time with no sweeper), holds no database connection while it waits, and at its deadline answers as a
 * 1.0 acquire of a busy key. Events are ordered by the service's own count of waiters, never by sleeping:
 * the key is freed only once the waiter is known to wait. A waiter woken by a notification is granted long
 * before any timer of its own (the holder's 60 s TTL) could have woken it.
 */
class WaitingAcquireTest extends WaitingTest {

    private static final Duration WOKEN_BY_NOTIFICATION = Duration.ofSeconds(10);

    @Autowired
    DataSource dataSource;

    @Autowired
    MeterRegistry meters;

    @Test
    void aWaiterIsGrantedTheKeyAsSoonAsTheHolderReleasesIt() throws Exception {
        Api.Response held = acquire(writer("alice"), "k", "job", "a", 60);
        CompletableFuture<Api.Response> waiting = waitFor(writer("bob"), "k", 20, 0);
        awaitWaiters(1);

        release(writer("alice"), id(held), token(held));

        Api.Response granted = waiting.get(WOKEN_BY_NOTIFICATION.toSeconds(), TimeUnit.SECONDS);
        assertThat(granted.status()).isEqualTo(201);
        assertThat(granted.body().get("owner").asString()).isEqualTo("bob");
        assertThat(token(granted)).isGreaterThan(token(held));
        assertThat(eventTypes(id(granted))).containsExactly("ACQUIRED");
        await().atMost(Duration.ofSeconds(5)).until(() -> waiters.count() == 0);
    }

    @Test
    void aWaiterIsGrantedTheKeyAsSoonAsAnAdminRevokesIt() throws Exception {
        Api.Response held = acquire(writer("alice"), "k", "job", "a", 60);
        CompletableFuture<Api.Response> waiting = waitFor(writer("bob"), "k", 20, 0);
        awaitWaiters(1);

        assertThat(revoke(admin("root"), id(held), "stuck job").status()).isEqualTo(200);

        Api.Response granted = waiting.get(WOKEN_BY_NOTIFICATION.toSeconds(), TimeUnit.SECONDS);
        assertThat(granted.status()).isEqualTo(201);
        assertThat(granted.body().get("owner").asString()).isEqualTo("bob");
    }

    @Test
    void aWaiterIsGrantedTheKeyWhenTheHolderExpiresWithNoSweeperRunning() throws Exception {
        Api.Response held = acquire(writer("alice"), "k", "job", "a", 2);
        CompletableFuture<Api.Response> waiting = waitFor(writer("bob"), "k", 20, 0);

        Api.Response granted = waiting.get(WOKEN_BY_NOTIFICATION.toSeconds(), TimeUnit.SECONDS);
        assertThat(granted.status()).isEqualTo(201);
        // Granted at the holder's expiry by the database's clock, not before it.
        assertThat(Instant.parse(granted.body().get("acquiredAt").asString()))
                .isAfterOrEqualTo(Instant.parse(held.body().get("expiresAt").asString()));
        assertThat(eventTypes(id(held))).containsExactly("ACQUIRED", "EXPIRED");
    }

    @Test
    void twoWaitersAndOneReleaseMakeExactlyOneGrantToTheLongestWaiting() throws Exception {
        Api.Response held = acquire(writer("alice"), "k", "job", "a", 60);
        CompletableFuture<Api.Response> first = waitFor(writer("bob"), "k", 20, 0);
        awaitWaiters(1);
        CompletableFuture<Api.Response> second = waitFor(writer("carol"), "k", 20, 0);
        awaitWaiters(2);

        release(writer("alice"), id(held), token(held));

        Api.Response granted = first.get(WOKEN_BY_NOTIFICATION.toSeconds(), TimeUnit.SECONDS);
        assertThat(granted.status()).isEqualTo(201);
        assertThat(granted.body().get("owner").asString()).isEqualTo("bob");
        awaitWaiters(1);
        assertThat(second).isNotDone();
        assertThat(jdbc.sql("SELECT count(*) FROM lease WHERE tenant = :tenant AND state = 'active'")
                .param("tenant", tenant).query(Long.class).single()).isEqualTo(1);

        release(writer("bob"), id(granted), token(granted));
        Api.Response next = second.get(WOKEN_BY_NOTIFICATION.toSeconds(), TimeUnit.SECONDS);
        assertThat(next.status()).isEqualTo(201);
        assertThat(next.body().get("owner").asString()).isEqualTo("carol");
    }

    @Test
    void atItsDeadlineAWaiterAnswersAsA10AcquireOfABusyKeyWithinOneSecond() throws Exception {
        acquire(writer("alice"), "k", "job", "a", 60);
        long sent = System.nanoTime();
        Api.Response busy = api.post("/v1/leases", writer("bob"), body("k", 1, 0));
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);

        assertThat(busy.status()).isEqualTo(409);
        assertThat(busy.code()).isEqualTo("LEASE_HELD");
        assertThat(busy.body().get("holder").get("owner").asString()).isEqualTo("alice");
        assertThat(busy.header("Retry-After")).isNotNull();
        assertThat(tookMillis).as("answered after waitSeconds, and no later than one second after it")
                .isBetween(1_000L, 2_000L);
        assertThat(waiters.count()).isZero();
    }

    @Test
    void aWaiterHoldsNoDatabaseConnectionWhileItWaits() throws Exception {
        Api.Response held = acquire(writer("alice"), "k", "job", "a", 60);
        CompletableFuture<Api.Response> waiting = waitFor(writer("bob"), "k", 20, 0);
        awaitWaiters(1);

        // Every connection back in the pool while the request still waits (a periodic job of the service,
        // such as the gauges' refresh, may borrow one for a moment: the pool is polled, not sampled once).
        HikariDataSource pool = dataSource.unwrap(HikariDataSource.class);
        await().atMost(Duration.ofSeconds(5)).until(() -> pool.getHikariPoolMXBean().getActiveConnections() == 0);
        assertThat(waiting).isNotDone();
        assertThat(waiters.count()).isEqualTo(1);

        release(writer("alice"), id(held), token(held));
        assertThat(waiting.get(WOKEN_BY_NOTIFICATION.toSeconds(), TimeUnit.SECONDS).status()).isEqualTo(201);
    }

    @Test
    void aWaiterWhoseClientHasGoneIsNeverGrantedTheKeyAndLeavesTheQueue() throws Exception {
        Api.Response held = acquire(writer("alice"), "k", "job", "a", 60);
        // Bob's client gives up after half a second and closes its connection; the request asked to wait 20.
        HttpClient impatient = HttpClient.newHttpClient();
        CompletableFuture<HttpResponse<String>> gaveUp = impatient.sendAsync(request(body("k", 20, 0))
                        .header("Authorization", "Bearer " + writer("bob")).timeout(Duration.ofMillis(500)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(gaveUp).failsWithin(Duration.ofSeconds(10)).withThrowableThat()
                .havingCause().isInstanceOf(HttpTimeoutException.class);
        impatient.close();
        // Bob's request looks at its client at least every second: it finds it gone and leaves the queue.
        awaitWaiters(0);
        assertThat(jdbc.sql("SELECT count(*) FROM lease_waiter WHERE tenant = :tenant")
                .param("tenant", tenant).query(Long.class).single()).as("rows left in the key's queue").isZero();
        CompletableFuture<Api.Response> carol = waitFor(writer("carol"), "k", 20, 0);
        awaitWaiters(1);

        release(writer("alice"), id(held), token(held));

        Api.Response granted = carol.get(WOKEN_BY_NOTIFICATION.toSeconds(), TimeUnit.SECONDS);
        assertThat(granted.body().get("owner").asString()).isEqualTo("carol");
        assertThat(jdbc.sql("SELECT count(*) FROM lease WHERE tenant = :tenant AND owner = 'bob'")
                .param("tenant", tenant).query(Long.class).single()).isZero();
        assertThat(meters.get("leasekeeper.wait").tags("kind", "acquire", "outcome", "gone").timer().count())
                .isPositive();
    }

    @Test
    void aRetryOfAGrantedWaitingAcquireReplaysTheGrant() throws Exception {
        Api.Response held = acquire(writer("alice"), "k", "job", "a", 60);
        CompletableFuture<Api.Response> waiting = bobWaitsWithKey(20, "wait-1");
        awaitWaiters(1);
        release(writer("alice"), id(held), token(held));
        Api.Response granted = waiting.get(WOKEN_BY_NOTIFICATION.toSeconds(), TimeUnit.SECONDS);
        assertThat(granted.status()).isEqualTo(201);

        Api.Response retry = api.send(request(body("k", 20, 0)).header("Idempotency-Key", "wait-1"), writer("bob"));
        assertThat(retry.status()).isEqualTo(201);
        assertThat(retry.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(id(retry)).isEqualTo(id(granted));
    }

    @Test
    void aRetryTakesTheKeyOfferedToItsFirstRequestWhenThatRequestNeverAnswered() throws Exception {
        Api.Response held = acquire(writer("alice"), "k", "job", "a", 60);
        // Bob's first request queues, then its client gives up; its row is made an orphan first, as if the
        // request's instance had stopped before answering: a row no request of any instance answers for.
        HttpClient impatient = HttpClient.newHttpClient();
        CompletableFuture<HttpResponse<String>> first = impatient.sendAsync(request(body("k", 20, 0))
                        .header("Authorization", "Bearer " + writer("bob")).header("Idempotency-Key", "adopt-1")
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
        awaitWaiters(1);
        assertThat(jdbc.sql("UPDATE lease_waiter SET id = gen_random_uuid() WHERE tenant = :tenant")
                .param("tenant", tenant).update()).isEqualTo(1);
        assertThat(first).failsWithin(Duration.ofSeconds(10)).withThrowableThat()
                .havingCause().isInstanceOf(HttpTimeoutException.class);
        impatient.close();
        awaitWaiters(0);

        // Alice's release offers the key to the orphaned row, the first in the key's queue: no lease is made.
        release(writer("alice"), id(held), token(held));
        assertThat(jdbc.sql("SELECT offered_until IS NOT NULL FROM lease_waiter WHERE tenant = :tenant")
                .param("tenant", tenant).query(Boolean.class).single()).isTrue();
        assertThat(jdbc.sql("SELECT count(*) FROM lease WHERE tenant = :tenant AND state = 'active'")
                .param("tenant", tenant).query(Long.class).single()).isZero();

        // Bob's retry (the same key, the same request) takes over the row and the key offered to it, at once,
        // rather than finding its key busy until the offer lapses.
        Api.Response retry = api.send(request(body("k", 20, 0)).header("Idempotency-Key", "adopt-1"), writer("bob"));
        assertThat(retry.status()).isEqualTo(201);
        String handed = id(retry);
        assertThat(jdbc.sql("SELECT owner FROM lease WHERE tenant = :tenant AND state = 'active'")
                .param("tenant", tenant).query(String.class).list()).containsExactly("bob");
        assertThat(jdbc.sql("SELECT count(*) FROM lease_waiter WHERE tenant = :tenant")
                .param("tenant", tenant).query(Long.class).single()).isZero();
        Api.Response again = api.send(request(body("k", 20, 0)).header("Idempotency-Key", "adopt-1"), writer("bob"));
        assertThat(again.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(id(again)).isEqualTo(handed);
    }

    @Test
    void aRetryWhileItsFirstRequestStillWaitsTakesOverItsRowAndOneLeaseAnswersBoth() throws Exception {
        Api.Response held = acquire(writer("alice"), "k", "job", "a", 60);
        CompletableFuture<Api.Response> first = bobWaitsWithKey(3, "twice-1");
        awaitWaiters(1);
        CompletableFuture<Api.Response> retry = bobWaitsWithKey(3, "twice-1");
        awaitWaiters(2);
        assertThat(jdbc.sql("SELECT count(*) FROM lease_waiter WHERE tenant = :tenant")
                .param("tenant", tenant).query(Long.class).single()).as("one row for the one logical request").isOne();

        release(writer("alice"), id(held), token(held));

        Api.Response retried = retry.get(WOKEN_BY_NOTIFICATION.toSeconds(), TimeUnit.SECONDS);
        Api.Response firstAnswer = first.get(WOKEN_BY_NOTIFICATION.toSeconds(), TimeUnit.SECONDS);
        assertThat(retried.status()).isEqualTo(201);
        assertThat(firstAnswer.status()).isEqualTo(201);
        assertThat(id(firstAnswer)).isEqualTo(id(retried));
        assertThat(jdbc.sql("SELECT count(*) FROM lease WHERE tenant = :tenant AND owner = 'bob'")
                .param("tenant", tenant).query(Long.class).single()).isOne();
    }

    @Test
    void theSweeperDeletesQueueRowsAMinuteAfterTheirWaitRanOut() {
        Api.Response held = acquire(writer("alice"), "k", "job", "a", 60);
        long keyId = jdbc.sql("SELECT key_id FROM lease WHERE id = CAST(:id AS uuid)").param("id", id(held))
                .query(Long.class).single();
        UUID abandoned = UUID.randomUUID();
        UUID recent = UUID.randomUUID();
        jdbc.sql("""
                INSERT INTO lease_waiter (id, key_id, wait_until, tenant, owner, holder, ttl_seconds,
                                          max_lifetime_seconds, lock_delay_seconds, metadata)
                VALUES (:abandoned, :keyId, lease_now() - interval '61 seconds', :tenant, 'bob', 'b', 30, 3600, 0, '{}'),
                       (:recent, :keyId, lease_now() - interval '59 seconds', :tenant, 'bob', 'b', 30, 3600, 0, '{}')
                """).param("abandoned", abandoned).param("recent", recent).param("keyId", keyId)
                .param("tenant", tenant).update();

        // Rows other tests left count too (any tenant's row abandoned a minute ago): at least this test's one.
        assertThat(sweeper.deleteAbandonedWaiters()).isPositive();

        assertThat(jdbc.sql("SELECT id FROM lease_waiter WHERE tenant = :tenant").param("tenant", tenant)
                .query(UUID.class).list()).containsExactly(recent);
        // A row whose wait ran out is never handed the key: the release leaves it free.
        release(writer("alice"), id(held), token(held));
        assertThat(jdbc.sql("SELECT count(*) FROM lease WHERE tenant = :tenant AND state = 'active'")
                .param("tenant", tenant).query(Long.class).single()).isZero();
        jdbc.sql("DELETE FROM lease_waiter WHERE tenant = :tenant").param("tenant", tenant).update();
    }

    @Test
    void waitSecondsOutsideItsBoundsIsAValidationFailure() {
        for (int wait : new int[] {-1, 31}) {
            Api.Response refused = api.post("/v1/leases", writer("bob"), body("k", wait, 0));
            assertThat(refused.status()).isEqualTo(400);
            assertThat(refused.code()).isEqualTo("VALIDATION_FAILED");
            assertThat(refused.body().get("errors").get(0).get("field").asString()).isEqualTo("waitSeconds");
        }
    }

    private CompletableFuture<Api.Response> waitFor(String token, String target, int waitSeconds, int lockDelay) {
        return CompletableFuture.supplyAsync(() -> api.post("/v1/leases", token, body(target, waitSeconds, lockDelay)),
                clients);
    }

    /** Bob's waiting acquire of "k" with an Idempotency-Key. */
    private CompletableFuture<Api.Response> bobWaitsWithKey(int waitSeconds, String idempotencyKey) {
        return CompletableFuture.supplyAsync(() -> api.send(request(body("k", waitSeconds, 0))
                .header("Idempotency-Key", idempotencyKey), writer("bob")), clients);
    }

    private HttpRequest.Builder request(Map<String, Object> body) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/leases"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json(body)));
    }

    static Map<String, Object> body(String target, int waitSeconds, int lockDelaySeconds) {
        Map<String, Object> body = new HashMap<>(Api.acquireBody(target, "job", "waiter", 30));
        body.put("waitSeconds", waitSeconds);
        body.put("lockDelaySeconds", lockDelaySeconds);
        return body;
    }

    private static String json(Map<String, Object> body) {
        return tools.jackson.databind.json.JsonMapper.builder().build().writeValueAsString(body);
    }

    static String id(Api.Response lease) {
        return lease.body().get("leaseId").asString();
    }

    static long token(Api.Response lease) {
        return lease.body().get("fencingToken").asLong();
    }
}
