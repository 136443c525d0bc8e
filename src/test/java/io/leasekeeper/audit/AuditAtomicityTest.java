package io.leasekeeper.audit;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** A transition and its audit event commit together or not at all. */
class AuditAtomicityTest extends IntegrationTest {

    @AfterEach
    void dropFault() {
        jdbc.sql("DROP TRIGGER IF EXISTS fail_audit ON lease_event").update();
        jdbc.sql("DROP FUNCTION IF EXISTS fail_audit()").update();
    }

    /** Makes every audit insert of this test's principal fail, as a full disk or a bug would. */
    private void failAuditInsertsOf(String principal) {
        jdbc.sql("""
                CREATE FUNCTION fail_audit() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF NEW.principal = '%s' AND NEW.type = TG_ARGV[0] THEN
                        RAISE EXCEPTION 'audit insert refused by test';
                    END IF;
                    RETURN NEW;
                END $$
                """.formatted(principal)).update();
    }

    private void failOn(String type) {
        jdbc.sql("CREATE TRIGGER fail_audit BEFORE INSERT ON lease_event FOR EACH ROW EXECUTE FUNCTION fail_audit('"
                + type + "')").update();
    }

    @Test
    void aRenewWhoseAuditInsertFailsLeavesNoTrace() {
        String principal = "audit-victim-" + tenant;
        String w = writer(principal);
        JsonNode lease = acquire(w, "audited", "job", "h", 30).body();
        String id = lease.get("leaseId").asString();
        failAuditInsertsOf(principal);
        failOn("RENEWED");

        Api.Response renew = renew(w, id, lease.get("fencingToken").asLong());
        assertThat(renew.status()).isEqualTo(500);
        assertThat(renew.code()).isEqualTo("INTERNAL_ERROR");
        assertThat(renew.raw()).doesNotContain("audit insert refused").doesNotContain("SQL").doesNotContain("Exception");

        JsonNode after = api.get("/v1/leases/" + id, w).body();
        assertThat(after.get("expiresAt").asString()).isEqualTo(lease.get("expiresAt").asString());
        assertThat(after.get("renewedAt").isNull()).isTrue();
        assertThat(eventTypes(id)).containsExactly("ACQUIRED");
    }

    @Test
    void anAcquireWhoseAuditInsertFailsGrantsNothing() {
        String principal = "audit-victim2-" + tenant;
        failAuditInsertsOf(principal);
        failOn("ACQUIRED");

        Api.Response r = acquire(writer(principal), "never", "job", "h", 30);
        assertThat(r.status()).isEqualTo(500);
        assertThat(jdbc.sql("SELECT count(*) FROM lease WHERE tenant = :t").param("t", tenant).query(Long.class).single())
                .isZero();
        dropFault();
        assertThat(acquire(writer("someone"), "never", "job", "h", 30).status()).isEqualTo(201);
    }

    @Test
    void everyTransitionHasExactlyOneEvent() {
        String w = writer("alice");
        JsonNode a = acquire(w, "one", "job", "h", 30).body();
        String id = a.get("leaseId").asString();
        long token = a.get("fencingToken").asLong();
        renew(w, id, token);
        renew(w, id, token);
        renew(w, id, 999_999_999L); // refused: no event
        release(w, id, token);
        release(w, id, token);      // a repeat is no transition: no event
        assertThat(eventTypes(id)).containsExactly("ACQUIRED", "RENEWED", "RENEWED", "RELEASED");

        JsonNode b = acquire(w, "one", "job", "h", 30).body();
        revoke(admin("root"), b.get("leaseId").asString(), "because");
        JsonNode revoked = api.get("/v1/leases/" + b.get("leaseId").asString() + "/events", w).body().get("items").get(1);
        assertThat(revoked.get("type").asString()).isEqualTo("REVOKED");
        assertThat(revoked.get("principal").asString()).isEqualTo("root");
        assertThat(revoked.get("details").get("reason").asString()).isEqualTo("because");
    }
}
