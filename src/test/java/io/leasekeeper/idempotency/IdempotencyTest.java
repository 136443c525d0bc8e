package io.leasekeeper.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import java.net.URI;
import java.net.http.HttpRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import tools.jackson.databind.json.JsonMapper;

/** Retries under an Idempotency-Key never act twice. */
class IdempotencyTest extends IntegrationTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Autowired
    IdempotencyStore store;

    private Api.Response post(String path, String token, String key, Object body) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
        if (key != null) {
            request.header("Idempotency-Key", key);
        }
        return api.send(request, token);
    }

    private long leasesInTenant() {
        return jdbc.sql("SELECT count(*) FROM lease WHERE tenant = :t").param("t", tenant).query(Long.class).single();
    }

    @Test
    void aRetryAfterALostResponseReplaysTheFirstAcquireWithoutASecondLeaseOrToken() {
        String w = writer("alice");
        var body = Api.acquireBody("idem", "job", "pod-1", 30);
        Api.Response first = post("/v1/leases", w, "\"acq-1\"", body); // response "lost": the client retries
        Api.Response retry = post("/v1/leases", w, "\"acq-1\"", body);

        assertThat(first.status()).isEqualTo(201);
        assertThat(first.header("Idempotent-Replayed")).isNull();
        assertThat(retry.status()).isEqualTo(201);
        assertThat(retry.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(retry.header("Location")).isEqualTo(first.header("Location"));
        assertThat(retry.body().get("leaseId").asString()).isEqualTo(first.body().get("leaseId").asString());
        assertThat(retry.body().get("fencingToken").asLong()).isEqualTo(first.body().get("fencingToken").asLong());
        assertThat(leasesInTenant()).isEqualTo(1);
        String id = first.body().get("leaseId").asString();
        assertThat(eventTypes(id)).containsExactly("ACQUIRED");
        assertThat(api.get("/v1/leases/" + id + "/events", w).body().get("items").get(0).get("requestId").asString())
                .isEqualTo("acq-1");

        // The replay shows the lease as it is now.
        renew(w, id, first.body().get("fencingToken").asLong());
        Api.Response later = post("/v1/leases", w, "acq-1", body);
        assertThat(later.status()).isEqualTo(201);
        assertThat(later.body().get("renewedAt").isNull()).isFalse();
    }

    @Test
    void anIdempotencyKeyIsTheCallersOwnNeverReplayedToAnotherSubjectOrTenant() {
        var body = Api.acquireBody("idem", "job", "pod-1", 30);
        Api.Response alices = post("/v1/leases", writer("alice"), "shared-key", body);
        String aliceLease = alices.body().get("leaseId").asString();

        // Another subject of the tenant, same key and request: its own acquire (here busy), not alice's answer.
        Api.Response bobs = post("/v1/leases", writer("bob"), "shared-key", body);
        // Another tenant, same subject, key and request: a lease of its own on its own key.
        String firstTenant = tenant;
        tenant = "t-other-" + firstTenant;
        Api.Response otherTenants = post("/v1/leases", writer("alice"), "shared-key", body);

        assertThat(alices.status()).isEqualTo(201);
        assertThat(bobs.status()).isEqualTo(409);
        assertThat(bobs.header("Idempotent-Replayed")).isNull();
        assertThat(bobs.body().has("leaseId")).as("alice's lease never shown to bob").isFalse();
        assertThat(otherTenants.status()).isEqualTo(201);
        assertThat(otherTenants.header("Idempotent-Replayed")).isNull();
        assertThat(otherTenants.body().get("leaseId").asString()).isNotEqualTo(aliceLease);
        assertThat(otherTenants.body().get("tenant").asString()).isEqualTo(tenant);
    }

    @Test
    void theSameKeyWithAnotherRequestAnswers422AndChangesNothing() {
        String w = writer("alice");
        post("/v1/leases", w, "k-1", Api.acquireBody("one", "job", "h", 30));
        Api.Response reused = post("/v1/leases", w, "k-1", Api.acquireBody("two", "job", "h", 30));
        assertThat(reused.status()).isEqualTo(422);
        assertThat(reused.code()).isEqualTo("IDEMPOTENCY_KEY_REUSED");
        assertThat(leasesInTenant()).isEqualTo(1);
        // Another subject's key space is its own.
        assertThat(post("/v1/leases", writer("bob"), "k-1", Api.acquireBody("two", "job", "h", 30)).status()).isEqualTo(201);
        assertThat(post("/v1/leases", w, "bad key with spaces", Api.acquireBody("x", "job", "h", 30)).code())
                .isEqualTo("VALIDATION_FAILED");
    }

    @Test
    void eightIdenticalRequestsInFlightAtOnceMakeOneLeaseWithOneToken() throws Exception {
        String w = writer("alice");
        var body = Api.acquireBody("flight", "job", "h", 30);
        CountDownLatch ready = new CountDownLatch(8);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Api.Response>> results = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(8)) {
            for (int i = 0; i < 8; i++) {
                results.add(pool.submit(() -> {
                    ready.countDown();
                    go.await();
                    return post("/v1/leases", w, "flight-1", body);
                }));
            }
            ready.await();
            go.countDown();
            List<Api.Response> responses = new ArrayList<>();
            for (Future<Api.Response> f : results) {
                responses.add(f.get());
            }
            assertThat(responses).allSatisfy(r -> assertThat(r.status()).isEqualTo(201));
            assertThat(responses.stream().filter(r -> r.header("Idempotent-Replayed") == null)).hasSize(1);
            assertThat(responses.stream().map(r -> r.body().get("fencingToken").asLong()).distinct()).hasSize(1);
        }
        assertThat(leasesInTenant()).isEqualTo(1);
    }

    @Test
    void renewReleaseAndRevokeReplayInsteadOfActingTwice() {
        String w = writer("alice");
        var lease = acquire(w, "ops", "job", "h", 30).body();
        String id = lease.get("leaseId").asString();
        long token = lease.get("fencingToken").asLong();

        Api.Response renew1 = post("/v1/leases/" + id + "/renew", w, "r-1", Map.of("fencingToken", token));
        Api.Response renew2 = post("/v1/leases/" + id + "/renew", w, "r-1", Map.of("fencingToken", token));
        assertThat(renew2.status()).isEqualTo(200);
        assertThat(renew2.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(renew2.body().get("expiresAt").asString()).isEqualTo(renew1.body().get("expiresAt").asString());
        assertThat(eventTypes(id)).containsExactly("ACQUIRED", "RENEWED");

        var other = acquire(w, "ops-2", "job", "h", 30).body();
        String otherId = other.get("leaseId").asString();
        Api.Response revoke1 = post("/v1/admin/leases/" + otherId + "/revoke", admin("root"), "v-1", Map.of("reason", "x"));
        Api.Response revoke2 = post("/v1/admin/leases/" + otherId + "/revoke", admin("root"), "v-1", Map.of("reason", "x"));
        assertThat(revoke1.status()).isEqualTo(200);
        assertThat(revoke2.status()).isEqualTo(200);
        assertThat(revoke2.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(eventTypes(otherId)).containsExactly("ACQUIRED", "REVOKED");

        assertThat(post("/v1/leases/" + id + "/release", w, "rel-1", Map.of("fencingToken", token)).status()).isEqualTo(200);
        Api.Response release2 = post("/v1/leases/" + id + "/release", w, "rel-1", Map.of("fencingToken", token));
        assertThat(release2.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(eventTypes(id)).containsExactly("ACQUIRED", "RENEWED", "RELEASED");
    }

    @Test
    void aRefusedRequestIsNotRememberedSoItsRetryRunsAgain() {
        String w = writer("alice");
        var holder = acquire(writer("bob"), "busy", "job", "h", 30).body();
        Api.Response held = post("/v1/leases", w, "try-1", Api.acquireBody("busy", "job", "h", 30));
        assertThat(held.code()).isEqualTo("LEASE_HELD");
        release(writer("bob"), holder.get("leaseId").asString(), holder.get("fencingToken").asLong());

        Api.Response retry = post("/v1/leases", w, "try-1", Api.acquireBody("busy", "job", "h", 30));
        assertThat(retry.status()).isEqualTo(201);
        assertThat(retry.header("Idempotent-Replayed")).isNull();
    }

    @Test
    void aRecordPastItsRetentionCountsAsAbsentAndIsCleanedUp() {
        String w = writer("alice");
        var body = Api.acquireBody("old", "job", "h", 30);
        var first = post("/v1/leases", w, "old-1", body).body();
        release(w, first.get("leaseId").asString(), first.get("fencingToken").asLong());
        jdbc.sql("UPDATE idempotency_record SET created_at = lease_now() - interval '25 hours' WHERE tenant = :t")
                .param("t", tenant).update();

        Api.Response again = post("/v1/leases", w, "old-1", body);
        assertThat(again.status()).isEqualTo(201);
        assertThat(again.header("Idempotent-Replayed")).isNull();
        assertThat(again.body().get("fencingToken").asLong()).isGreaterThan(first.get("fencingToken").asLong());

        jdbc.sql("UPDATE idempotency_record SET created_at = lease_now() - interval '25 hours' WHERE tenant = :t")
                .param("t", tenant).update();
        assertThat(store.deleteExpired(1000)).isGreaterThanOrEqualTo(1);
        assertThat(jdbc.sql("SELECT count(*) FROM idempotency_record WHERE tenant = :t").param("t", tenant)
                .query(Long.class).single()).isZero();
    }
}
