package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** Expiry is decided by PostgreSQL's clock at every read and write; the sweeper is off in these tests. */
class ExpiryTest extends IntegrationTest {

    @Test
    void anExpiredLeaseReadsExpiredRenewAndReleaseAnswer410AndANewAcquireGetsALargerToken() {
        String w = writer("alice");
        JsonNode lease = acquire(w, "expiring", "job", "h", 30).body();
        String id = lease.get("leaseId").asString();
        long token = lease.get("fencingToken").asLong();
        backdateExpiry(id);

        JsonNode read = api.get("/v1/leases/" + id, w).body();
        assertThat(read.get("state").asString()).isEqualTo("expired");
        assertThat(read.get("remainingMs").asLong()).isZero();
        assertThat(read.get("endedAt").asString()).isEqualTo(read.get("expiresAt").asString());
        assertThat(read.get("endReason").asString()).isEqualTo("expired");
        assertThat(api.get("/v1/leases/current?targetType=opaque&target=expiring&actor=job", w).code())
                .isEqualTo("NO_ACTIVE_LEASE");
        assertThat(api.get("/v1/leases?state=expired", w).body().get("items").size()).isEqualTo(1);
        assertThat(api.get("/v1/leases", w).body().get("items").size()).isZero();

        Api.Response renew = renew(w, id, token);
        assertThat(renew.status()).isEqualTo(410);
        assertThat(renew.code()).isEqualTo("LEASE_EXPIRED");
        Api.Response release = release(w, id, token);
        assertThat(release.status()).isEqualTo(410);
        assertThat(release.code()).isEqualTo("LEASE_EXPIRED");
        assertThat(revoke(admin("root"), id, "late").code()).isEqualTo("LEASE_NOT_ACTIVE");

        Api.Response next = acquire(writer("bob"), "expiring", "job", "h2", 30);
        assertThat(next.status()).isEqualTo(201);
        assertThat(next.body().get("fencingToken").asLong()).isGreaterThan(token);

        assertThat(eventTypes(id)).containsExactly("ACQUIRED", "EXPIRED");
        String expiredPrincipal = jdbc.sql("SELECT principal FROM lease_event WHERE lease_id = CAST(:id AS uuid) AND type = 'EXPIRED'")
                .param("id", id).query(String.class).single();
        assertThat(expiredPrincipal).isEqualTo("system:acquire");
        // The new grant's ACQUIRED comes after the old lease's EXPIRED, in the same transaction.
        long expiredEvent = jdbc.sql("SELECT id FROM lease_event WHERE lease_id = CAST(:id AS uuid) AND type = 'EXPIRED'")
                .param("id", id).query(Long.class).single();
        long acquiredEvent = jdbc.sql("SELECT id FROM lease_event WHERE lease_id = CAST(:id AS uuid) AND type = 'ACQUIRED'")
                .param("id", next.body().get("leaseId").asString()).query(Long.class).single();
        assertThat(acquiredEvent).isGreaterThan(expiredEvent);
        assertThat(api.get("/v1/leases/" + id, w).body().get("state").asString()).isEqualTo("expired");
    }

    @Test
    void renewAfterExpiryAnswersGoneAndNeverRevives() {
        String w = writer("alice");
        JsonNode lease = acquire(w, "short", "job", "h", 1).body();
        String id = lease.get("leaseId").asString();
        long token = lease.get("fencingToken").asLong();

        // Real time passing, judged by the database's clock: poll until PostgreSQL says it has expired.
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() ->
                "expired".equals(api.get("/v1/leases/" + id, w).body().get("state").asString()));

        assertThat(renew(w, id, token).code()).isEqualTo("LEASE_EXPIRED");
        JsonNode after = api.get("/v1/leases/" + id, w).body();
        assertThat(after.get("state").asString()).isEqualTo("expired");
        assertThat(after.get("renewedAt").isNull()).isTrue();
        assertThat(Instant.parse(after.get("serverTime").asString()))
                .isAfterOrEqualTo(Instant.parse(after.get("expiresAt").asString()));
        assertThat(eventTypes(id)).containsExactly("ACQUIRED");
    }

    @Test
    void aLeaseIsExpiredAtTheExactInstantOfItsExpiry() {
        String w = writer("alice");
        JsonNode lease = acquire(w, "boundary", "job", "h", 30).body();
        String id = lease.get("leaseId").asString();
        // expires_at = now, to the millisecond: "now < expiresAt" no longer holds.
        jdbc.sql("UPDATE lease SET expires_at = lease_now() WHERE id = CAST(:id AS uuid)").param("id", id).update();

        assertThat(renew(w, id, lease.get("fencingToken").asLong()).code()).isEqualTo("LEASE_EXPIRED");
        assertThat(acquire(writer("bob"), "boundary", "job", "h", 30).status()).isEqualTo(201);
    }
}
