package io.leasekeeper.limits;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.TestPropertySource;

/**
 * Contract 1.1, "Tenant limits": an acquire beyond the tenant's quota of active leases is 429 QUOTA_EXCEEDED
 * and changes nothing; requests beyond the tenant's rate on an instance are 429 RATE_LIMITED with Retry-After;
 * neither touches another tenant. (Here: a quota of 3, and 1 request a second after a burst of 30.)
 */
@TestPropertySource(properties = {"leasekeeper.limits.max-active-leases-per-tenant=3",
        "leasekeeper.limits.requests-per-second-per-tenant=1", "leasekeeper.limits.request-burst-per-tenant=30"})
class TenantLimitsTest extends IntegrationTest {

    private static final tools.jackson.databind.json.JsonMapper JSON = tools.jackson.databind.json.JsonMapper.builder().build();

    @Test
    void anAcquireBeyondTheQuotaIsRefusedAndChangesNothing() {
        for (String target : new String[] {"a", "b", "c"}) {
            assertThat(acquire(writer("alice"), target, "report", "pod-1", 60).status()).isEqualTo(201);
        }
        long eventsBefore = events();

        Api.Response refused = acquire(writer("alice"), "d", "report", "pod-1", 60);

        assertThat(refused.status()).isEqualTo(429);
        assertThat(refused.body().get("code").asString()).isEqualTo("QUOTA_EXCEEDED");
        assertThat(refused.header("Content-Type")).startsWith("application/problem+json");
        assertThat(activeLeases(tenant)).isEqualTo(3);
        assertThat(events()).as("no event written").isEqualTo(eventsBefore);
        assertThat(jdbc.sql("SELECT count(*) FROM lease_key WHERE tenant = :t AND target_value = 'd'")
                .param("t", tenant).query(Long.class).single()).as("no key row left behind").isZero();
    }

    @Test
    void aReleaseMakesRoomOnceTheCountIsTakenAgain() {
        String first = null;
        for (String target : new String[] {"a", "b", "c"}) {
            var body = acquire(writer("alice"), target, "report", "pod-1", 60).body();
            first = first == null ? body.get("leaseId").asString() + "/" + body.get("fencingToken").asLong() : first;
        }
        assertThat(acquire(writer("alice"), "d", "report", "pod-1", 60).status()).isEqualTo(429);
        String[] lease = first.split("/");
        assertThat(release(writer("alice"), lease[0], Long.parseLong(lease[1])).status()).isEqualTo(200);

        // The count is taken again at most a second (quota-refresh) later.
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(300))
                .until(() -> acquire(writer("alice"), "d", "report", "pod-1", 60).status() == 201);
        assertThat(activeLeases(tenant)).isEqualTo(3);
    }

    @Test
    void aReplayOfAGrantedAcquireIsAnsweredEvenAtTheQuota() {
        Map<String, Object> body = Api.acquireBody("a", "report", "pod-1", 60);
        Api.Response granted = acquireWithKey(body, "k-1");
        acquire(writer("alice"), "b", "report", "pod-1", 60);
        acquire(writer("alice"), "c", "report", "pod-1", 60);

        Api.Response replayed = acquireWithKey(body, "k-1");

        assertThat(replayed.status()).isEqualTo(201);
        assertThat(replayed.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(replayed.body().get("leaseId").asString()).isEqualTo(granted.body().get("leaseId").asString());
    }

    @Test
    void theQuotaIsPerTenant() {
        for (String target : new String[] {"a", "b", "c"}) {
            acquire(writer("alice"), target, "report", "pod-1", 60);
        }
        String mine = tenant;
        freshTenantForTest();

        assertThat(acquire(writer("bob"), "d", "report", "pod-1", 60).status()).isEqualTo(201);
        assertThat(activeLeases(mine)).isEqualTo(3);
    }

    @Test
    void requestsBeyondTheRateAre429WithRetryAfterAndOtherTenantsAreServed() {
        Api.Response limited = null;
        int sent = 0;
        long start = System.nanoTime();
        while (limited == null && sent < 200) {
            Api.Response r = api.get("/v1/leases", reader("carol"));
            sent++;
            if (r.status() == 429) {
                limited = r;
            } else {
                assertThat(r.status()).isEqualTo(200);
            }
        }
        long seconds = (System.nanoTime() - start) / 1_000_000_000L;

        assertThat(limited).as("a 429 within 200 requests").isNotNull();
        assertThat(limited.body().get("code").asString()).isEqualTo("RATE_LIMITED");
        assertThat(Long.parseLong(limited.header("Retry-After"))).isBetween(1L, 2L);
        // The burst of 30, and one more for each second the loop took.
        assertThat(sent - 1).isBetween(30, 30 + (int) seconds + 1);
        freshTenantForTest();
        assertThat(api.get("/v1/leases", reader("dave")).status()).as("another tenant").isEqualTo(200);
    }

    private Api.Response acquireWithKey(Map<String, Object> body, String idempotencyKey) {
        return api.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + port + "/v1/leases"))
                .header("Content-Type", "application/json").header("Idempotency-Key", idempotencyKey)
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))), writer("alice"));
    }

    private void freshTenantForTest() {
        tenant = "t-" + java.util.UUID.randomUUID().toString().substring(0, 8);
    }

    private long activeLeases(String t) {
        return jdbc.sql("SELECT count(*) FROM lease WHERE tenant = :t AND state = 'active'").param("t", t)
                .query(Long.class).single();
    }

    private long events() {
        return jdbc.sql("SELECT count(*) FROM lease_event WHERE lease_id IN (SELECT id FROM lease WHERE tenant = :t)")
                .param("t", tenant).query(Long.class).single();
    }
}
