package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.sweeper.LeaseSweeper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.dao.DataAccessException;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Post-state validation (docs/concepts/locking.md, "Post-state validation"): a write statement whose row counts contradict
 * what it assumed fails loudly instead of answering a success. Each test makes one statement change nothing: a
 * BEFORE trigger, created by the test on one table for this test's tenant only (other tenants' writes pass) and
 * dropped in a finally, returns NULL, which silently skips the row. The request must answer 500 INTERNAL_ERROR,
 * log the statement that contradicted itself, and leave nothing half-written: the transaction rolled back, no
 * event without its transition and no transition without its event. The statements of waiting acquires and
 * watches (the queue's rows, the keys' watch marks) are made to change nothing the same way; a statement whose
 * nothing is ordinary (a queue row of another request under the same Idempotency-Key) is told apart from one
 * whose write was swallowed.
 */
@ExtendWith(OutputCaptureExtension.class)
@TestPropertySource(properties = {"leasekeeper.sweeper.batch-size=25", "leasekeeper.sweeper.workers=4"})
class PostStateValidationTest extends IntegrationTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Autowired
    LeaseSweeper sweeper;

    /** The clients of waiting acquires that the test answers later. */
    private final ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor();

    /**
     * No queue row of this test is left to the sweeper's cleanup (or to other tests' counts of abandoned rows):
     * a granted waiting acquire without Idempotency-Key leaves its row, and some tests leave one on purpose.
     */
    @AfterEach
    void deleteQueueRows() {
        clients.shutdownNow();
        jdbc.sql("DELETE FROM lease_waiter WHERE tenant = :t").param("t", tenant).update();
    }

    /**
     * Runs {@code action} while a BEFORE {@code operation} trigger on {@code table} skips every row of this test's
     * tenant for which {@code condition} (over NEW and OLD) holds; the trigger is gone afterwards, whatever happens.
     */
    private <T> T whileSkipped(String table, String operation, String condition, Supplier<T> action) {
        return whileTriggered(table, operation, """
                IF %s THEN
                    RETURN NULL;
                END IF;
                IF TG_OP = 'DELETE' THEN
                    RETURN OLD;
                END IF;
                RETURN NEW;""".formatted(condition), action);
    }

    /**
     * Runs {@code action} while a BEFORE {@code operation} trigger on {@code table} runs {@code body} (PL/pgSQL)
     * for every row; the trigger is gone afterwards, whatever happens.
     */
    private <T> T whileTriggered(String table, String operation, String body, Supplier<T> action) {
        jdbc.sql("""
                CREATE FUNCTION post_state_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    %s
                END $$
                """.formatted(body)).update();
        try {
            jdbc.sql("CREATE TRIGGER post_state_trigger BEFORE " + operation + " ON " + table
                    + " FOR EACH ROW EXECUTE FUNCTION post_state_trigger()").update();
            return action.get();
        } finally {
            jdbc.sql("DROP TRIGGER IF EXISTS post_state_trigger ON " + table).update();
            jdbc.sql("DROP FUNCTION post_state_trigger()").update();
        }
    }

    private String ofTenant(String row) {
        return row + ".tenant = '" + tenant + "'";
    }

    private static void assertInternalError(Api.Response response, CapturedOutput output, String statement) {
        assertThat(response.status()).as(response.raw()).isEqualTo(500);
        assertThat(response.code()).isEqualTo("INTERNAL_ERROR");
        assertThat(response.raw()).doesNotContain("LeaseStore").doesNotContain("Exception");
        assertThat(output.getOut() + output.getErr()).contains(statement + " on ");
    }

    private JsonNode granted(String token, String target) {
        Api.Response acquired = acquire(token, target, "job", "h", 30);
        assertThat(acquired.status()).as(acquired.raw()).isEqualTo(201);
        return acquired.body();
    }

    private List<Map<String, Object>> leasesOfTenant() {
        return jdbc.sql("""
                SELECT CAST(id AS text) AS id, state, expires_at, renewed_at, ended_at FROM lease
                WHERE tenant = :t ORDER BY fencing_token
                """).param("t", tenant).query().listOfRows();
    }

    private Map<String, Object> leaseRow(String leaseId) {
        return jdbc.sql("SELECT state, expires_at, ended_at FROM lease WHERE id = CAST(:id AS uuid)")
                .param("id", leaseId).query().singleRow();
    }

    private long eventsOfTenant() {
        return jdbc.sql("SELECT count(*) FROM lease_event e JOIN lease l ON l.id = e.lease_id WHERE l.tenant = :t")
                .param("t", tenant).query(Long.class).single();
    }

    @Test
    void aGrantThatInsertsNoLeaseIsAnErrorNotASuccess(CapturedOutput output) {
        Api.Response acquire = whileSkipped("lease", "INSERT", ofTenant("NEW"),
                () -> acquire(writer("alice"), "grant", "job", "h", 30));

        assertInternalError(acquire, output, "lease_grant");
        assertThat(leasesOfTenant()).isEmpty();
        assertThat(granted(writer("alice"), "grant").get("state").asString()).isEqualTo("active");
    }

    /**
     * A lease of {@code principal}, then {@code call} on it while the trigger skips rows: a 500 naming
     * {@code statement}, and the lease and its events as they were.
     */
    private void assertSkippedWriteOnLeaseFails(CapturedOutput output, String statement, String principal,
                                                String table, String condition, Function<JsonNode, Api.Response> call) {
        JsonNode lease = granted(writer(principal), "on-lease");
        List<Map<String, Object>> before = leasesOfTenant();

        Api.Response response = whileSkipped(table, operationOn(table), condition,
                () -> call.apply(lease));

        assertInternalError(response, output, statement);
        assertThat(leasesOfTenant()).isEqualTo(before);
        assertThat(eventTypes(lease.get("leaseId").asString())).containsExactly("ACQUIRED");
    }

    private static String operationOn(String table) {
        return table.equals("lease_event") ? "INSERT" : "UPDATE";
    }

    private Api.Response renewed(String principal, JsonNode lease) {
        return renew(writer(principal), lease.get("leaseId").asString(), lease.get("fencingToken").asLong());
    }

    @Test
    void aRenewThatChangesNoRowIsAnErrorNotASuccess(CapturedOutput output) {
        assertSkippedWriteOnLeaseFails(output, "lease_renew", "alice", "lease", ofTenant("OLD"),
                lease -> renewed("alice", lease));
    }

    @Test
    void aReleaseThatChangesNoRowIsAnErrorNotASuccess(CapturedOutput output) {
        assertSkippedWriteOnLeaseFails(output, "lease_end", "alice", "lease", ofTenant("OLD"),
                lease -> release(writer("alice"), lease.get("leaseId").asString(), lease.get("fencingToken").asLong()));
    }

    @Test
    void aRevokeThatChangesNoRowIsAnErrorNotASuccess(CapturedOutput output) {
        assertSkippedWriteOnLeaseFails(output, "lease_end", "alice", "lease", ofTenant("OLD"),
                lease -> revoke(admin("root"), lease.get("leaseId").asString(), "post-state"));
    }

    @Test
    void aRevokeWhoseLockDelayIsNotWrittenIsAnErrorNotASuccess(CapturedOutput output) {
        Map<String, Object> body = new HashMap<>(Api.acquireBody("delayed", "job", "h", 30));
        body.put("lockDelaySeconds", 30);
        Api.Response acquired = api.post("/v1/leases", writer("alice"), body);
        assertThat(acquired.status()).as(acquired.raw()).isEqualTo(201);
        String id = acquired.body().get("leaseId").asString();
        List<Map<String, Object>> before = leasesOfTenant();

        Api.Response revoke = whileSkipped("lease_key", "UPDATE", ofTenant("OLD"),
                () -> revoke(admin("root"), id, "post-state"));

        assertInternalError(revoke, output, "lease_end");
        assertThat(leasesOfTenant()).isEqualTo(before);
        assertThat(eventTypes(id)).containsExactly("ACQUIRED");
    }

    @Test
    void anExpiryFoundByAnAcquireThatChangesNoRowIsAnErrorNotASuccess(CapturedOutput output) {
        JsonNode lease = granted(writer("alice"), "expiry");
        backdateExpiry(lease.get("leaseId").asString());
        List<Map<String, Object>> before = leasesOfTenant();

        Api.Response acquire = whileSkipped("lease", "UPDATE", ofTenant("OLD") + " AND NEW.state = 'expired'",
                () -> acquire(writer("bob"), "expiry", "job", "h", 30));

        assertInternalError(acquire, output, "lease_expire_locked");
        assertThat(leasesOfTenant()).isEqualTo(before);
        assertThat(eventTypes(lease.get("leaseId").asString())).containsExactly("ACQUIRED");
    }

    /**
     * Sweeping while the trigger skips the lease fails, naming the batch's statement and the lease, which stays
     * as it was with its one event; a batch without the trigger then expires it. Sweeps of this tenant alone: other
     * test classes leave due leases behind (the sweeper is off in tests), often of more tenants than one run reaches.
     */
    private void assertSweepingFails(String leaseId, String condition, Runnable sweep) {
        assertSweepingFails(leaseId, "lease", "UPDATE", condition, leaseId, sweep);
    }

    /**
     * Sweeping while the trigger skips {@code operation} on {@code table} fails with an error naming the batch's
     * function and saying {@code contradiction}; the lease stays as it was, and a batch without the trigger expires it.
     */
    private void assertSweepingFails(String leaseId, String table, String operation, String condition,
                                     String contradiction, Runnable sweep) {
        Map<String, Object> before = leaseRow(leaseId);
        whileSkipped(table, operation, condition, () -> {
            assertThatThrownBy(sweep::run).isInstanceOf(DataAccessException.class)
                    .hasMessageContaining("lease_expire_locked on tenant").hasMessageContaining(contradiction);
            return null;
        });
        assertThat(leaseRow(leaseId)).isEqualTo(before).containsEntry("state", "active");
        assertThat(eventTypes(leaseId)).containsExactly("ACQUIRED");
        assertThat(sweeper.sweepOnce(tenant)).isOne();
        assertThat(eventTypes(leaseId)).containsExactly("ACQUIRED", "EXPIRED");
    }

    @Test
    void aSweeperBatchThatExpiresFewerLeasesThanItLockedIsAnErrorNotASuccess() {
        String id = granted(writer("alice"), "swept").get("leaseId").asString();
        backdateExpiry(id);
        assertSweepingFails(id, ofTenant("OLD"), () -> sweeper.sweepOnce(tenant));
    }

    @Test
    void aSweeperBatchWhoseEventIsNotWrittenIsAnErrorNotASuccess() {
        String id = granted(writer("alice"), "swept-event").get("leaseId").asString();
        backdateExpiry(id);
        assertSweepingFails(id, "lease_event", "INSERT", "NEW.type = 'EXPIRED' AND NEW.lease_id = '" + id + "'",
                "it expired 1 leases but wrote 0 events", () -> sweeper.sweepOnce(tenant));
    }

    @Test
    void aSweeperBatchWhoseLockDelayIsNotWrittenIsAnErrorNotASuccess() {
        Map<String, Object> body = new HashMap<>(Api.acquireBody("swept-delay", "job", "h", 30));
        body.put("lockDelaySeconds", 30);
        Api.Response acquired = api.post("/v1/leases", writer("alice"), body);
        assertThat(acquired.status()).as(acquired.raw()).isEqualTo(201);
        String id = acquired.body().get("leaseId").asString();
        backdateExpiry(id);
        assertSweepingFails(id, "lease_key", "UPDATE", ofTenant("OLD"), "wrote 1 events and 0 of 1 lock-delays",
                () -> sweeper.sweepOnce(tenant));
    }

    @Test
    void aSweeperRunFailsWithTheErrorOfABatchItSweptAlongsideOthers() {
        // A full first batch (25) makes the tenant's sweep drain the backlog with several workers at once.
        for (int i = 0; i < 25; i++) {
            backdateExpiry(granted(writer("alice"), "backlog-" + i).get("leaseId").asString());
        }
        String victim = granted(writer("alice"), "victim").get("leaseId").asString();
        backdateExpiry(victim); // due last: a later batch, swept by one of the workers
        assertSweepingFails(victim, "OLD.id = '" + victim + "'", () -> sweeper.sweepTenant(tenant));
    }

    @Test
    void aGrantWhoseEventIsNotWrittenIsAnErrorNotASuccess(CapturedOutput output) {
        String principal = "skipped-" + tenant;
        Api.Response acquire = whileSkipped("lease_event", "INSERT", "NEW.principal = '" + principal + "'",
                () -> acquire(writer(principal), "event", "job", "h", 30));

        assertInternalError(acquire, output, "lease_grant");
        assertThat(leasesOfTenant()).isEmpty();
        assertThat(eventsOfTenant()).isZero();
    }

    @Test
    void aRenewWhoseEventIsNotWrittenIsAnErrorNotASuccess(CapturedOutput output) {
        String principal = "skipped-" + tenant;
        assertSkippedWriteOnLeaseFails(output, "lease_renew", principal, "lease_event", "NEW.principal = '" + principal + "'",
                lease -> renewed(principal, lease));
    }

    @Test
    void aReleaseWhoseEventIsNotWrittenIsAnErrorNotASuccess(CapturedOutput output) {
        String principal = "skipped-" + tenant;
        assertSkippedWriteOnLeaseFails(output, "lease_end", principal, "lease_event",
                "NEW.principal = '" + principal + "' AND NEW.type = 'RELEASED'",
                lease -> release(writer(principal), lease.get("leaseId").asString(), lease.get("fencingToken").asLong()));
    }

    @Test
    void anExpiryByAnAcquireWhoseEventIsNotWrittenIsAnErrorNotASuccess(CapturedOutput output) {
        JsonNode lease = granted(writer("alice"), "expiry-event");
        String id = lease.get("leaseId").asString();
        backdateExpiry(id);
        List<Map<String, Object>> before = leasesOfTenant();

        Api.Response acquire = whileSkipped("lease_event", "INSERT",
                "NEW.type = 'EXPIRED' AND NEW.lease_id = '" + id + "'",
                () -> acquire(writer("bob"), "expiry-event", "job", "h", 30));

        assertInternalError(acquire, output, "lease_expire_locked");
        assertThat(leasesOfTenant()).isEqualTo(before);
        assertThat(eventTypes(id)).containsExactly("ACQUIRED");
    }

    @Test
    void aKeyWhoseRowIsNotMadeIsAnErrorNotASuccess(CapturedOutput output) {
        Api.Response acquire = whileSkipped("lease_key", "INSERT", ofTenant("NEW"),
                () -> acquire(writer("alice"), "new-key", "job", "h", 30));

        assertInternalError(acquire, output, "lease_acquire");
        assertThat(jdbc.sql("SELECT count(*) FROM lease_key WHERE tenant = :t").param("t", tenant)
                .query(Long.class).single()).isZero();
        assertThat(leasesOfTenant()).isEmpty();
    }

    /** A waiting acquire's first try, which looks at the key without its lock first, makes a new key's row too. */
    @Test
    void aKeyWhoseRowAWaitingAcquireDoesNotMakeIsAnErrorNotASuccess(CapturedOutput output) {
        Api.Response acquire = whileSkipped("lease_key", "INSERT", ofTenant("NEW"),
                () -> waitingAcquire(writer("alice"), "new-key", 5, null));

        assertInternalError(acquire, output, "lease_acquire");
        assertThat(jdbc.sql("SELECT count(*) FROM lease_key WHERE tenant = :t").param("t", tenant)
                .query(Long.class).single()).isZero();
        assertThat(leasesOfTenant()).isEmpty();
    }

    /** A key someone waits for or watches is released by the same call, which checks its write and then hands it over. */
    @Test
    void aReleaseOfAWatchedKeyThatChangesNoRowIsAnErrorNotASuccess(CapturedOutput output) {
        JsonNode lease = granted(writer("alice"), "watched");
        jdbc.sql("UPDATE lease_key SET watched_until = lease_now() + interval '1 minute' WHERE tenant = :t")
                .param("t", tenant).update();
        List<Map<String, Object>> before = leasesOfTenant();

        Api.Response release = whileSkipped("lease", "UPDATE", ofTenant("OLD"),
                () -> release(writer("alice"), id(lease), token(lease)));

        assertInternalError(release, output, "lease_end");
        assertThat(leasesOfTenant()).isEqualTo(before);
        assertThat(eventTypes(id(lease))).containsExactly("ACQUIRED");
    }

    /** A waiting acquire's request, with an Idempotency-Key or none. */
    private HttpRequest.Builder waitingRequest(String target, int waitSeconds, String idempotencyKey) {
        Map<String, Object> body = new HashMap<>(Api.acquireBody(target, "job", "h", 30));
        body.put("waitSeconds", waitSeconds);
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/leases"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
        return idempotencyKey == null ? request : request.header("Idempotency-Key", idempotencyKey);
    }

    private Api.Response waitingAcquire(String token, String target, int waitSeconds, String idempotencyKey) {
        return api.send(waitingRequest(target, waitSeconds, idempotencyKey), token);
    }

    /** A waiting acquire whose answer the test takes later ({@link #answerOf}). */
    private CompletableFuture<Api.Response> waitingAcquireAsync(String token, String target, int waitSeconds,
                                                                String idempotencyKey) {
        return CompletableFuture.supplyAsync(() -> waitingAcquire(token, target, waitSeconds, idempotencyKey), clients);
    }

    private static Api.Response answerOf(CompletableFuture<Api.Response> request) {
        return request.orTimeout(30, TimeUnit.SECONDS).join();
    }

    /** This tenant's queue rows in arrival order: id, end of the key's offer to it (null: none), wait. */
    private List<Map<String, Object>> queueOfTenant() {
        return jdbc.sql("""
                SELECT CAST(id AS text) AS id, offered_until, wait_until FROM lease_waiter
                WHERE tenant = :t ORDER BY position
                """).param("t", tenant).query().listOfRows();
    }

    /** Until this tenant's key queues hold {@code rows} rows: a waiting acquire has queued once its try committed. */
    private void awaitQueueRows(int rows) {
        await().atMost(Duration.ofSeconds(10)).until(() -> queueOfTenant().size() == rows);
    }

    private long watchMarksOfTenant() {
        return jdbc.sql("SELECT count(*) FROM lease_key WHERE tenant = :t AND watched_until IS NOT NULL")
                .param("t", tenant).query(Long.class).single();
    }

    private List<String> activeOwners() {
        return jdbc.sql("SELECT owner FROM lease WHERE tenant = :t AND state = 'active' ORDER BY fencing_token")
                .param("t", tenant).query(String.class).list();
    }

    private static String id(JsonNode lease) {
        return lease.get("leaseId").asString();
    }

    private static long token(JsonNode lease) {
        return lease.get("fencingToken").asLong();
    }

    @Test
    void aWaitingAcquireWhoseWatchMarkIsNotWrittenIsAnErrorNotASuccess(CapturedOutput output) {
        granted(writer("alice"), "watched");
        List<Map<String, Object>> before = leasesOfTenant();

        Api.Response waiting = whileSkipped("lease_key", "UPDATE", ofTenant("OLD"),
                () -> waitingAcquire(writer("bob"), "watched", 1, null));

        // Unmarked, the release would neither hand the key over nor notify: bob would wait for nothing.
        assertInternalError(waiting, output, "lease_queue");
        assertThat(output.getOut() + output.getErr()).contains("the key was not marked watched");
        assertThat(watchMarksOfTenant()).isZero();
        assertThat(queueOfTenant()).isEmpty();
        assertThat(leasesOfTenant()).isEqualTo(before);
    }

    @Test
    void aWatchWhoseMarkIsNotWrittenIsAnErrorNotASuccess(CapturedOutput output) {
        JsonNode lease = granted(writer("alice"), "watch");

        Api.Response watch = whileSkipped("lease_key", "UPDATE", ofTenant("OLD"),
                () -> api.get("/v1/leases/" + id(lease) + "?waitSeconds=1", reader("carol")));

        assertInternalError(watch, output, "WatchMarks.WATCH_KEY_OF_LEASE");
        assertThat(watchMarksOfTenant()).isZero();
    }

    @Test
    void aWaitingAcquireWhoseQueueRowIsNotWrittenIsAnErrorNotASuccess(CapturedOutput output) {
        granted(writer("alice"), "queued");
        List<Map<String, Object>> before = leasesOfTenant();

        Api.Response waiting = whileSkipped("lease_waiter", "INSERT", ofTenant("NEW"),
                () -> waitingAcquire(writer("bob"), "queued", 20, null));

        assertInternalError(waiting, output, "lease_queue");
        assertThat(output.getOut() + output.getErr()).contains("it wrote no row for the waiting request");
        assertThat(queueOfTenant()).isEmpty();
        assertThat(watchMarksOfTenant()).as("the key's watch mark, written in the same try").isZero();
        assertThat(leasesOfTenant()).isEqualTo(before);
    }

    @Test
    void aWaitingAcquireReusingTheIdempotencyKeyOfAQueuedRequestIsRefusedNotAnError(CapturedOutput output) {
        JsonNode held = granted(writer("alice"), "reused");
        CompletableFuture<Api.Response> first = waitingAcquireAsync(writer("bob"), "reused", 20, "reused-1");
        awaitQueueRows(1);
        List<Map<String, Object>> queued = queueOfTenant();

        // Another request (it waits less) under the same key: lease_queue takes no row over and writes nothing.
        Api.Response other = waitingAcquire(writer("bob"), "reused", 19, "reused-1");

        assertThat(other.status()).as(other.raw()).isEqualTo(422);
        assertThat(other.code()).isEqualTo("IDEMPOTENCY_KEY_REUSED");
        assertThat(output.getOut() + output.getErr()).doesNotContain("lease_queue on ");
        assertThat(queueOfTenant()).isEqualTo(queued);
        assertThat(release(writer("alice"), id(held), token(held)).status()).isEqualTo(200);
        assertThat(answerOf(first).status()).isEqualTo(201);
    }

    @Test
    void aHandOverThatUpdatesNoQueueRowIsAnErrorNotASuccess(CapturedOutput output) {
        JsonNode held = granted(writer("alice"), "handed");
        CompletableFuture<Api.Response> bob = waitingAcquireAsync(writer("bob"), "handed", 20, null);
        awaitQueueRows(1);
        List<Map<String, Object>> leases = leasesOfTenant();
        List<Map<String, Object>> queued = queueOfTenant();

        Api.Response release = whileSkipped("lease_waiter", "UPDATE", ofTenant("OLD"),
                () -> release(writer("alice"), id(held), token(held)));

        assertInternalError(release, output, "lease_hand_over");
        assertThat(leasesOfTenant()).isEqualTo(leases);
        assertThat(eventTypes(id(held))).containsExactly("ACQUIRED");
        assertThat(queueOfTenant()).as("bob's row, still waiting").isEqualTo(queued);
        // The queue as it was: the next release offers the key to bob, who takes it.
        assertThat(release(writer("alice"), id(held), token(held)).status()).isEqualTo(200);
        Api.Response granted = answerOf(bob);
        assertThat(granted.status()).as(granted.raw()).isEqualTo(201);
        assertThat(granted.body().get("owner").asString()).isEqualTo("bob");
    }

    @Test
    void aWaitingAcquireThatTakesTheOfferedKeyAndDeletesNoRowIsAnErrorNotASuccess(CapturedOutput output) {
        JsonNode held = granted(writer("alice"), "take");
        CompletableFuture<Api.Response> bob = waitingAcquireAsync(writer("bob"), "take", 20, "take-1");
        awaitQueueRows(1);

        // The release offers the key to bob's row and wakes him; his try takes the key and deletes his row.
        Api.Response answer = whileSkipped("lease_waiter", "DELETE", ofTenant("OLD"), () -> {
            assertThat(release(writer("alice"), id(held), token(held)).status()).isEqualTo(200);
            return answerOf(bob);
        });

        assertInternalError(answer, output, "lease_hand_over");
        // The offer committed with the release; bob's try rolled back whole: no lease, and his row keeps its offer.
        assertThat(activeOwners()).isEmpty();
        assertThat(eventTypes(id(held))).containsExactly("ACQUIRED", "RELEASED");
        List<Map<String, Object>> queued = queueOfTenant();
        assertThat(queued).hasSize(1);
        assertThat(queued.getFirst().get("offered_until")).isNotNull();
        // Its retry takes over the row, and the key offered to it.
        Api.Response retry = waitingAcquire(writer("bob"), "take", 20, "take-1");
        assertThat(retry.status()).as(retry.raw()).isEqualTo(201);
        assertThat(activeOwners()).containsExactly("bob");
        assertThat(queueOfTenant()).isEmpty();
    }

    @Test
    void aWaitingAcquireThatDeletesNoQueueRowAtItsDeadlineIsAnErrorNotASuccess(CapturedOutput output) {
        granted(writer("alice"), "leave");
        List<Map<String, Object>> before = leasesOfTenant();

        Api.Response waiting = whileSkipped("lease_waiter", "DELETE", ofTenant("OLD"),
                () -> waitingAcquire(writer("bob"), "leave", 1, null));

        // Left in the queue, the row could be offered the key, which no request would take until the offer lapsed.
        assertInternalError(waiting, output, "lease_acquire (last try)");
        assertThat(leasesOfTenant()).isEqualTo(before);
        assertThat(queueOfTenant()).as("bob's row, its deletion rolled back").hasSize(1)
                .allSatisfy(row -> assertThat(row.get("offered_until")).isNull());
    }

    @Test
    void aWaitingAcquireWhoseClientHasGoneAndThatDeletesNoQueueRowIsAnError(CapturedOutput output) {
        granted(writer("alice"), "gone");
        List<Map<String, Object>> before = leasesOfTenant();

        whileSkipped("lease_waiter", "DELETE", ofTenant("OLD"), () -> {
            // Bob's client gives up after half a second; the request asked to wait 20, under an Idempotency-Key.
            try (HttpClient impatient = HttpClient.newHttpClient()) {
                CompletableFuture<HttpResponse<String>> gaveUp = impatient.sendAsync(
                        waitingRequest("gone", 20, "gone-1").header("Authorization", "Bearer " + writer("bob"))
                                .timeout(Duration.ofMillis(500)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(gaveUp).failsWithin(Duration.ofSeconds(10)).withThrowableThat()
                        .havingCause().isInstanceOf(HttpTimeoutException.class);
            }
            // No one reads the request's answer: its log says why it failed.
            await().atMost(Duration.ofSeconds(10)).until(() ->
                    (output.getOut() + output.getErr()).contains("lease_leave_queue on waiting row"));
            return null;
        });

        assertThat(leasesOfTenant()).isEqualTo(before);
        assertThat(queueOfTenant()).as("bob's row, its deletion rolled back").hasSize(1)
                .allSatisfy(row -> assertThat(row.get("offered_until")).isNull());
    }

    @Test
    void aSweeperBatchThatDeletesFewerAbandonedQueueRowsThanItFoundIsAnErrorNotASuccess() {
        JsonNode held = granted(writer("alice"), "abandoned");
        jdbc.sql("""
                INSERT INTO lease_waiter (id, key_id, wait_until, tenant, owner, holder, ttl_seconds,
                                          max_lifetime_seconds, lock_delay_seconds, metadata)
                SELECT gen_random_uuid(), key_id, lease_now() - interval '61 seconds', tenant, 'bob', 'b', 30, 3600, 0, '{}'
                FROM lease WHERE id = CAST(:id AS uuid)
                """).param("id", id(held)).update();
        List<Map<String, Object>> queued = queueOfTenant();

        whileSkipped("lease_waiter", "DELETE", ofTenant("OLD"), () -> {
            assertThatThrownBy(sweeper::deleteAbandonedWaiters).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("SweeperStore.DELETE_ABANDONED_WAITERS");
            return null;
        });

        assertThat(queueOfTenant()).isEqualTo(queued);
        sweeper.deleteAbandonedWaiters();
        assertThat(queueOfTenant()).isEmpty();
    }
}
