package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.sweeper.LeaseSweeper;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;

/**
 * Post-state validation (docs/design.md, "Post-state validation"): a write statement whose row counts contradict
 * what it assumed fails loudly instead of answering a success. Each test makes one statement change nothing: a
 * BEFORE trigger, created by the test on one table for this test's tenant only (other tenants' writes pass) and
 * dropped in a finally, returns NULL, which silently skips the row. The request must answer 500 INTERNAL_ERROR,
 * log the statement that contradicted itself, and leave nothing half-written: the transaction rolled back, no
 * event without its transition and no transition without its event.
 */
@ExtendWith(OutputCaptureExtension.class)
@TestPropertySource(properties = {"leasekeeper.sweeper.batch-size=25", "leasekeeper.sweeper.workers=4"})
class PostStateValidationTest extends IntegrationTest {

    @Autowired
    LeaseSweeper sweeper;

    /**
     * Runs {@code action} while a BEFORE {@code operation} trigger on {@code table} skips every row of this test's
     * tenant for which {@code condition} (over NEW and OLD) holds; the trigger is gone afterwards, whatever happens.
     */
    private <T> T whileSkipped(String table, String operation, String condition, Supplier<T> action) {
        jdbc.sql("""
                CREATE FUNCTION post_state_skip() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF %s THEN
                        RETURN NULL;
                    END IF;
                    RETURN NEW;
                END $$
                """.formatted(condition)).update();
        try {
            jdbc.sql("CREATE TRIGGER post_state_skip BEFORE " + operation + " ON " + table
                    + " FOR EACH ROW EXECUTE FUNCTION post_state_skip()").update();
            return action.get();
        } finally {
            jdbc.sql("DROP TRIGGER IF EXISTS post_state_skip ON " + table).update();
            jdbc.sql("DROP FUNCTION post_state_skip()").update();
        }
    }

    private String ofTenant(String row) {
        return row + ".tenant = '" + tenant + "'";
    }

    private static void assertInternalError(Api.Response response, CapturedOutput output, String statement) {
        assertThat(response.status()).as(response.raw()).isEqualTo(500);
        assertThat(response.code()).isEqualTo("INTERNAL_ERROR");
        assertThat(response.raw()).doesNotContain("LeaseStore").doesNotContain("Exception");
        assertThat(output.getOut() + output.getErr()).contains("LeaseStore." + statement + " on ");
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

        assertInternalError(acquire, output, "ACQUIRE_IF_FREE");
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
        assertSkippedWriteOnLeaseFails(output, "RENEW", "alice", "lease", ofTenant("OLD"),
                lease -> renewed("alice", lease));
    }

    @Test
    void aReleaseThatChangesNoRowIsAnErrorNotASuccess(CapturedOutput output) {
        assertSkippedWriteOnLeaseFails(output, "END (released)", "alice", "lease", ofTenant("OLD"),
                lease -> release(writer("alice"), lease.get("leaseId").asString(), lease.get("fencingToken").asLong()));
    }

    @Test
    void aRevokeThatChangesNoRowIsAnErrorNotASuccess(CapturedOutput output) {
        assertSkippedWriteOnLeaseFails(output, "END (revoked)", "alice", "lease", ofTenant("OLD"),
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

        assertInternalError(revoke, output, "END (revoked)");
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

        assertInternalError(acquire, output, "EXPIRE");
        assertThat(leasesOfTenant()).isEqualTo(before);
        assertThat(eventTypes(lease.get("leaseId").asString())).containsExactly("ACQUIRED");
    }

    /**
     * Sweeping while the trigger skips the lease fails, naming the batch's statement and the lease, which stays
     * as it was with its one event; a sweep without the trigger then expires it. Leases other test classes left
     * behind may fall due too: sweeps run until one takes this lease.
     */
    private void assertSweepingFails(String leaseId, String condition, Runnable sweep) {
        Map<String, Object> before = leaseRow(leaseId);
        whileSkipped("lease", "UPDATE", condition, () -> {
            assertThatThrownBy(() -> {
                for (int i = 0; i < 100; i++) {
                    sweep.run();
                }
            }).isInstanceOf(IllegalStateException.class).hasMessageContaining("LeaseStore.EXPIRE_DUE")
                    .hasMessageContaining(leaseId);
            return null;
        });
        assertThat(leaseRow(leaseId)).isEqualTo(before).containsEntry("state", "active");
        assertThat(eventTypes(leaseId)).containsExactly("ACQUIRED");
        sweeper.sweepDue();
        assertThat(eventTypes(leaseId)).containsExactly("ACQUIRED", "EXPIRED");
    }

    @Test
    void aSweeperBatchThatExpiresFewerLeasesThanItLockedIsAnErrorNotASuccess() {
        String id = granted(writer("alice"), "swept").get("leaseId").asString();
        backdateExpiry(id);
        assertSweepingFails(id, ofTenant("OLD"), sweeper::sweepOnce);
    }

    @Test
    void aSweeperRunFailsWithTheErrorOfABatchItSweptAlongsideOthers() {
        // A full first batch (25) makes the run drain the backlog with several workers at once.
        for (int i = 0; i < 25; i++) {
            backdateExpiry(granted(writer("alice"), "backlog-" + i).get("leaseId").asString());
        }
        String victim = granted(writer("alice"), "victim").get("leaseId").asString();
        backdateExpiry(victim); // due last: a later batch, swept by one of the workers
        assertSweepingFails(victim, "OLD.id = '" + victim + "'", sweeper::sweepDue);
    }

    @Test
    void aGrantWhoseEventIsNotWrittenIsAnErrorNotASuccess(CapturedOutput output) {
        String principal = "skipped-" + tenant;
        Api.Response acquire = whileSkipped("lease_event", "INSERT", "NEW.principal = '" + principal + "'",
                () -> acquire(writer(principal), "event", "job", "h", 30));

        assertInternalError(acquire, output, "ACQUIRE_IF_FREE");
        assertThat(leasesOfTenant()).isEmpty();
        assertThat(eventsOfTenant()).isZero();
    }

    @Test
    void aRenewWhoseEventIsNotWrittenIsAnErrorNotASuccess(CapturedOutput output) {
        String principal = "skipped-" + tenant;
        assertSkippedWriteOnLeaseFails(output, "RENEW", principal, "lease_event", "NEW.principal = '" + principal + "'",
                lease -> renewed(principal, lease));
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

        assertInternalError(acquire, output, "EXPIRE");
        assertThat(leasesOfTenant()).isEqualTo(before);
        assertThat(eventTypes(id)).containsExactly("ACQUIRED");
    }
}
