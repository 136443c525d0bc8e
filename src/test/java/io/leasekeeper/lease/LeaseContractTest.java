package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** Every row of the contract's operations table, and the body shapes it promises, over HTTP. */
class LeaseContractTest extends IntegrationTest {

    @Test
    void acquireIfFreeGrantsWithLocationTokenAndFullRepresentation() {
        Map<String, Object> body = new HashMap<>(Api.acquireBody("  repo/main  ", "Indexer", "indexer-7f9c/pod-2", 30));
        body.put("operation", "Reindex");
        body.put("jobId", "job-1");
        body.put("traceId", "trace-1");
        body.put("metadata", Map.of("shard", 3));
        Api.Response r = api.post("/v1/leases", writer("svc-indexer"), body);

        assertThat(r.status()).isEqualTo(201);
        JsonNode l = r.body();
        assertThat(r.header("Location")).isEqualTo("/v1/leases/" + l.get("leaseId").asString());
        assertThat(l.get("key").asString()).isEqualTo(tenant + "/default/opaque:repo%2Fmain/indexer/reindex");
        assertThat(l.get("tenant").asString()).isEqualTo(tenant);
        assertThat(l.get("program").asString()).isEqualTo("default");
        assertThat(l.get("target").get("type").asString()).isEqualTo("opaque");
        assertThat(l.get("target").get("value").asString()).isEqualTo("repo/main");
        assertThat(l.get("actor").asString()).isEqualTo("indexer");
        assertThat(l.get("operation").asString()).isEqualTo("reindex");
        assertThat(l.get("owner").asString()).isEqualTo("svc-indexer");
        assertThat(l.get("holder").asString()).isEqualTo("indexer-7f9c/pod-2");
        assertThat(l.get("fencingToken").asLong()).isPositive();
        assertThat(l.get("state").asString()).isEqualTo("active");
        assertThat(l.get("ttlSeconds").asInt()).isEqualTo(30);
        assertThat(l.get("maxLifetimeSeconds").asInt()).isEqualTo(86400);
        assertThat(l.get("endedAt").isNull()).isTrue();
        assertThat(l.get("endReason").isNull()).isTrue();
        assertThat(l.get("jobId").asString()).isEqualTo("job-1");
        assertThat(l.get("traceId").asString()).isEqualTo("trace-1");
        assertThat(l.get("metadata").get("shard").asInt()).isEqualTo(3);
        for (String instant : List.of("acquiredAt", "expiresAt", "maxExpiresAt", "serverTime")) {
            assertThat(l.get(instant).asString()).as(instant).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z");
        }
        Instant acquired = Instant.parse(l.get("acquiredAt").asString());
        assertThat(Instant.parse(l.get("expiresAt").asString())).isEqualTo(acquired.plusSeconds(30));
        assertThat(Instant.parse(l.get("maxExpiresAt").asString())).isEqualTo(acquired.plusSeconds(86400));
        assertThat(l.get("remainingMs").asLong()).isBetween(1L, 30_000L);
    }

    @Test
    void acquireOnAHeldKeyAnswers409LeaseHeldWithHolderAndRetryAfterButNoIdOrToken() {
        Api.Response first = acquire(writer("alice"), "build-42", "runner", "pod-a", 30);
        Api.Response second = acquire(writer("bob"), "build-42", "runner", "pod-b", 30);

        assertThat(second.status()).isEqualTo(409);
        assertThat(second.header("Content-Type")).startsWith("application/problem+json");
        assertThat(second.code()).isEqualTo("LEASE_HELD");
        JsonNode holder = second.body().get("holder");
        assertThat(holder.get("owner").asString()).isEqualTo("alice");
        assertThat(holder.get("holder").asString()).isEqualTo("pod-a");
        assertThat(holder.get("expiresAt").asString()).isEqualTo(first.body().get("expiresAt").asString());
        assertThat(holder.get("remainingMs").asLong()).isBetween(1L, 30_000L);
        assertThat(Integer.parseInt(second.header("Retry-After"))).isBetween(1, 30);
        assertThat(second.raw()).doesNotContain(first.body().get("leaseId").asString())
                .doesNotContain("\"fencingToken\"");
        assertThat(second.body().get("traceId").asString()).isNotBlank();
    }

    @Test
    void keysDifferByOperationProgramAndActorButNotByCaseOrSurroundingWhitespace() {
        String w = writer("alice");
        assertThat(acquire(w, "x", "a", "h", 30).status()).isEqualTo(201);
        assertThat(acquire(w, " x ", "A", "h", 30).status()).isEqualTo(409);
        assertThat(acquire(w, "x", "b", "h", 30).status()).isEqualTo(201);
        Map<String, Object> withOperation = new HashMap<>(Api.acquireBody("x", "a", "h", 30));
        withOperation.put("operation", "op");
        assertThat(api.post("/v1/leases", w, withOperation).status()).isEqualTo(201);
        Map<String, Object> otherProgram = new HashMap<>(Api.acquireBody("x", "a", "h", 30));
        otherProgram.put("program", "billing");
        assertThat(api.post("/v1/leases", w, otherProgram).status()).isEqualTo(201);
    }

    @Test
    void typedTargetsAreNormalizedIntoTheKeySoEquivalentSpellingsAreOneLock() {
        String w = writer("alice");
        Api.Response byHost = api.post("/v1/leases", w, Map.of("target", Map.of("type", "host", "value", "10.0.0.1"),
                "actor", "scanner", "holder", "h", "ttlSeconds", 30));
        assertThat(byHost.status()).isEqualTo(201);
        assertThat(byHost.body().get("target").get("type").asString()).isEqualTo("ip");
        assertThat(byHost.body().get("key").asString()).isEqualTo(tenant + "/default/ip:10.0.0.1/scanner");
        Api.Response mapped = api.post("/v1/leases", w, Map.of("target", Map.of("type", "ip", "value", "[::ffff:10.0.0.1]"),
                "actor", "scanner", "holder", "h", "ttlSeconds", 30));
        assertThat(mapped.code()).isEqualTo("LEASE_HELD");

        Api.Response idn = api.post("/v1/leases", w, Map.of("target", Map.of("type", "host", "value", "BÜCHER.de."),
                "actor", "crawler", "holder", "h", "ttlSeconds", 30));
        assertThat(idn.body().get("target").get("value").asString()).isEqualTo("xn--bcher-kva.de");
        assertThat(api.get("/v1/leases/current?targetType=host&target=xn--bcher-kva.de&actor=crawler", w).status())
                .isEqualTo(200);

        Api.Response url = api.post("/v1/leases", w, Map.of("target", Map.of("type", "url",
                "value", "http://Example.COM:80/a/./b/../c%7e?x=1#frag"), "actor", "fetcher", "holder", "h", "ttlSeconds", 30));
        assertThat(url.body().get("target").get("value").asString()).isEqualTo("http://example.com/a/c~?x=1");
        assertThat(url.body().get("key").asString())
                .isEqualTo(tenant + "/default/url:http%3A%2F%2Fexample.com%2Fa%2Fc~%3Fx%3D1/fetcher");
        assertThat(api.get("/v1/leases?targetType=host&target=10.0.0.1", w).body().get("items").size()).isEqualTo(1);

        Api.Response credentials = api.post("/v1/leases", w, Map.of("target", Map.of("type", "url",
                "value", "https://user:secret@example.com/"), "actor", "fetcher", "holder", "h", "ttlSeconds", 30));
        assertThat(credentials.status()).isEqualTo(400);
        assertThat(credentials.body().get("errors").get(0).get("field").asString()).isEqualTo("target.value");
        assertThat(credentials.raw()).doesNotContain("secret");
    }

    @Test
    void renewExtendsFromNowKeepsTokenAndNeverPassesMaxExpiresAt() {
        String w = writer("alice");
        Map<String, Object> body = new HashMap<>(Api.acquireBody("renew-me", "job", "h", 10));
        body.put("maxLifetimeSeconds", 20);
        JsonNode lease = api.post("/v1/leases", w, body).body();
        String id = lease.get("leaseId").asString();
        long token = lease.get("fencingToken").asLong();

        Api.Response renewed = api.post("/v1/leases/" + id + "/renew", w, Map.of("fencingToken", token, "ttlSeconds", 15));
        assertThat(renewed.status()).isEqualTo(200);
        JsonNode r = renewed.body();
        assertThat(r.get("fencingToken").asLong()).isEqualTo(token);
        assertThat(r.get("ttlSeconds").asInt()).isEqualTo(15);
        Instant renewedAt = Instant.parse(r.get("renewedAt").asString());
        Instant maxExpires = Instant.parse(r.get("maxExpiresAt").asString());
        Instant expected = renewedAt.plusSeconds(15).isAfter(maxExpires) ? maxExpires : renewedAt.plusSeconds(15);
        assertThat(Instant.parse(r.get("expiresAt").asString())).isEqualTo(expected);

        Api.Response capped = api.post("/v1/leases/" + id + "/renew", w, Map.of("fencingToken", token, "ttlSeconds", 3600));
        assertThat(capped.status()).isEqualTo(200);
        assertThat(capped.body().get("expiresAt").asString()).isEqualTo(lease.get("maxExpiresAt").asString());
    }

    @Test
    void renewWithoutTtlKeepsTheLeasesTtl() {
        String w = writer("alice");
        JsonNode lease = acquire(w, "keep-ttl", "job", "h", 40).body();
        JsonNode r = renew(w, lease.get("leaseId").asString(), lease.get("fencingToken").asLong()).body();
        assertThat(r.get("ttlSeconds").asInt()).isEqualTo(40);
        assertThat(Instant.parse(r.get("expiresAt").asString()))
                .isEqualTo(Instant.parse(r.get("renewedAt").asString()).plusSeconds(40));
    }

    @Test
    void renewAndReleaseOfAnUnknownLeaseAnswer404() {
        String w = writer("alice");
        String unknown = UUID.randomUUID().toString();
        assertThat(renew(w, unknown, 1).code()).isEqualTo("LEASE_NOT_FOUND");
        assertThat(renew(w, unknown, 1).status()).isEqualTo(404);
        assertThat(release(w, unknown, 1).status()).isEqualTo(404);
        assertThat(release(w, unknown, 1).code()).isEqualTo("LEASE_NOT_FOUND");
        assertThat(api.get("/v1/leases/not-a-uuid", w).status()).isEqualTo(404);
        assertThat(api.get("/v1/leases/1-2-3-4-5", w).code()).isEqualTo("LEASE_NOT_FOUND");
    }

    @Test
    void renewOrReleaseWithAnotherTokenAnswers409FencingTokenMismatch() {
        String w = writer("alice");
        JsonNode lease = acquire(w, "fenced", "job", "h", 30).body();
        String id = lease.get("leaseId").asString();
        long stale = lease.get("fencingToken").asLong() - 1;

        Api.Response renew = renew(w, id, stale);
        assertThat(renew.status()).isEqualTo(409);
        assertThat(renew.code()).isEqualTo("FENCING_TOKEN_MISMATCH");
        Api.Response release = release(w, id, stale);
        assertThat(release.status()).isEqualTo(409);
        assertThat(release.code()).isEqualTo("FENCING_TOKEN_MISMATCH");
        assertThat(api.get("/v1/leases/" + id, w).body().get("state").asString()).isEqualTo("active");
    }

    @Test
    void releaseFreesTheKeyAndARepeatByTheOwnerAnswers200Again() {
        String w = writer("alice");
        JsonNode lease = acquire(w, "rel", "job", "h", 30).body();
        String id = lease.get("leaseId").asString();
        long token = lease.get("fencingToken").asLong();

        Api.Response released = release(w, id, token);
        assertThat(released.status()).isEqualTo(200);
        assertThat(released.body().get("state").asString()).isEqualTo("released");
        assertThat(released.body().get("endedAt").asString()).isNotBlank();
        assertThat(released.body().get("remainingMs").asLong()).isZero();
        Api.Response again = release(w, id, token);
        assertThat(again.status()).isEqualTo(200);
        assertThat(again.body().get("state").asString()).isEqualTo("released");
        assertThat(eventTypes(id)).containsExactly("ACQUIRED", "RELEASED");

        Api.Response renewReleased = renew(w, id, token);
        assertThat(renewReleased.status()).isEqualTo(410);
        assertThat(renewReleased.code()).isEqualTo("LEASE_RELEASED");

        Api.Response next = acquire(writer("bob"), "rel", "job", "h2", 30);
        assertThat(next.status()).isEqualTo(201);
        assertThat(next.body().get("fencingToken").asLong()).isGreaterThan(token);
    }

    @Test
    void revokeEndsTheLeaseFreesTheKeyAndTheHolderGets410LeaseRevoked() {
        String w = writer("alice");
        JsonNode lease = acquire(w, "rev", "job", "h", 30).body();
        String id = lease.get("leaseId").asString();
        long token = lease.get("fencingToken").asLong();

        Api.Response revoked = revoke(admin("root"), id, "stuck job");
        assertThat(revoked.status()).isEqualTo(200);
        assertThat(revoked.body().get("state").asString()).isEqualTo("revoked");
        assertThat(revoked.body().get("endReason").asString()).isEqualTo("stuck job");

        assertThat(renew(w, id, token).status()).isEqualTo(410);
        assertThat(renew(w, id, token).code()).isEqualTo("LEASE_REVOKED");
        assertThat(release(w, id, token).status()).isEqualTo(410);
        assertThat(release(w, id, token).code()).isEqualTo("LEASE_REVOKED");
        assertThat(acquire(writer("bob"), "rev", "job", "h", 30).status()).isEqualTo(201);

        Api.Response again = revoke(admin("root"), id, "again");
        assertThat(again.status()).isEqualTo(409);
        assertThat(again.code()).isEqualTo("LEASE_NOT_ACTIVE");
        assertThat(revoke(admin("root"), UUID.randomUUID().toString(), "x").status()).isEqualTo(404);
        assertThat(revoke(admin("root"), id, "").code()).isEqualTo("VALIDATION_FAILED");
        assertThat(revoke(admin("root"), id, "r".repeat(513)).status()).isEqualTo(400);
    }

    @Test
    void inspectCurrentAndHistory() {
        String w = writer("alice");
        JsonNode lease = acquire(w, "repo/main", "indexer", "h", 30).body();
        String id = lease.get("leaseId").asString();

        Api.Response inspect = api.get("/v1/leases/" + id, reader("someone-else"));
        assertThat(inspect.status()).isEqualTo(200);
        assertThat(inspect.body().get("leaseId").asString()).isEqualTo(id);

        Api.Response current = api.get("/v1/leases/current?targetType=opaque&target=repo%2Fmain&actor=INDEXER", w);
        assertThat(current.status()).isEqualTo(200);
        assertThat(current.body().get("leaseId").asString()).isEqualTo(id);

        Api.Response none = api.get("/v1/leases/current?targetType=opaque&target=repo%2Fmain&actor=indexer&operation=x", w);
        assertThat(none.status()).isEqualTo(404);
        assertThat(none.code()).isEqualTo("NO_ACTIVE_LEASE");
        Api.Response bad = api.get("/v1/leases/current?targetType=dns&target=x&actor=indexer", w);
        assertThat(bad.status()).isEqualTo(400);
        assertThat(bad.code()).isEqualTo("VALIDATION_FAILED");
        assertThat(api.get("/v1/leases/current?target=x", w).body().get("errors").size()).isEqualTo(2);

        renew(w, id, lease.get("fencingToken").asLong());
        release(w, id, lease.get("fencingToken").asLong());
        Api.Response history = api.get("/v1/leases/" + id + "/events", w);
        assertThat(history.status()).isEqualTo(200);
        JsonNode items = history.body().get("items");
        assertThat(items.size()).isEqualTo(3);
        assertThat(items.get(0).get("type").asString()).isEqualTo("ACQUIRED");
        assertThat(items.get(0).get("fromState").isNull()).isTrue();
        assertThat(items.get(0).get("toState").asString()).isEqualTo("active");
        assertThat(items.get(1).get("type").asString()).isEqualTo("RENEWED");
        JsonNode releasedEvent = items.get(2);
        assertThat(releasedEvent.get("type").asString()).isEqualTo("RELEASED");
        assertThat(releasedEvent.get("fromState").asString()).isEqualTo("active");
        assertThat(releasedEvent.get("toState").asString()).isEqualTo("released");
        assertThat(releasedEvent.get("leaseId").asString()).isEqualTo(id);
        assertThat(releasedEvent.get("principal").asString()).isEqualTo("alice");
        assertThat(releasedEvent.get("fencingToken").asLong()).isEqualTo(lease.get("fencingToken").asLong());
        assertThat(releasedEvent.get("eventId").asLong()).isGreaterThan(items.get(1).get("eventId").asLong());
        assertThat(releasedEvent.get("at").asString()).isNotBlank();
        assertThat(releasedEvent.get("traceId").asString()).isNotBlank();
        assertThat(releasedEvent.has("details")).isTrue();
        assertThat(releasedEvent.has("requestId")).isTrue();
        assertThat(api.get("/v1/leases/" + UUID.randomUUID() + "/events", w).code()).isEqualTo("LEASE_NOT_FOUND");
    }

    @Test
    void listFiltersByStateAndKeyPartsAndPagesWithACursor() {
        String w = writer("alice");
        for (int i = 0; i < 5; i++) {
            acquire(w, "page-" + i, "pager", "h", 30);
        }
        JsonNode releasedLease = acquire(w, "gone", "pager", "h", 30).body();
        release(w, releasedLease.get("leaseId").asString(), releasedLease.get("fencingToken").asLong());
        acquire(writer("bob"), "other", "other-actor", "bob-pod", 30);

        Api.Response page1 = api.get("/v1/leases?actor=pager&limit=2", w);
        assertThat(page1.status()).isEqualTo(200);
        assertThat(page1.body().get("items").size()).isEqualTo(2);
        String cursor = page1.body().get("nextCursor").asString();
        Api.Response page2 = api.get("/v1/leases?actor=pager&limit=2&cursor=" + cursor, w);
        Api.Response page3 = api.get("/v1/leases?actor=pager&limit=2&cursor=" + page2.body().get("nextCursor").asString(), w);
        assertThat(page3.body().get("items").size()).isEqualTo(1);
        assertThat(page3.body().get("nextCursor").isNull()).isTrue();
        long t1 = page1.body().get("items").get(1).get("fencingToken").asLong();
        long t2 = page2.body().get("items").get(0).get("fencingToken").asLong();
        assertThat(t2).isLessThan(t1);

        assertThat(api.get("/v1/leases", w).body().get("items").size()).isEqualTo(6);
        assertThat(api.get("/v1/leases?state=any", w).body().get("items").size()).isEqualTo(7);
        assertThat(api.get("/v1/leases?state=released", w).body().get("items").size()).isEqualTo(1);
        assertThat(api.get("/v1/leases?owner=bob", w).body().get("items").get(0).get("holder").asString()).isEqualTo("bob-pod");
        assertThat(api.get("/v1/leases?holder=bob-pod", w).body().get("items").size()).isEqualTo(1);
        assertThat(api.get("/v1/leases?targetType=opaque&target=page-3", w).body().get("items").size()).isEqualTo(1);
        assertThat(api.get("/v1/leases?program=default&actor=other-actor", w).body().get("items").size()).isEqualTo(1);

        for (String query : List.of("state=bogus", "limit=0", "limit=1001", "limit=abc", "cursor=not-a-cursor", "target=x",
                "targetType=nope", "actor=-bad", "holder=%00", "owner=a%0Ab")) {
            Api.Response r = api.get("/v1/leases?" + query, w);
            assertThat(r.status()).as(query).isEqualTo(400);
            assertThat(r.code()).as(query).isEqualTo("VALIDATION_FAILED");
            assertThat(r.body().get("errors").get(0).has("field")).as(query).isTrue();
        }
    }

    @Test
    void invalidAcquireRequestsAnswer400ValidationFailedNamingEachField() {
        String w = writer("alice");
        Api.Response r = api.post("/v1/leases", w, Map.of("target", Map.of("type", "opaque", "value", "   "),
                "actor", "_bad", "holder", "", "ttlSeconds", 0, "program", "bad program"));
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.code()).isEqualTo("VALIDATION_FAILED");
        List<String> fields = r.body().get("errors").valueStream().map(e -> e.get("field").asString()).toList();
        assertThat(fields).containsExactlyInAnyOrder("target.value", "actor", "holder", "ttlSeconds", "program");
        r.body().get("errors").forEach(e -> assertThat(e.get("message").asString()).isNotBlank());

        Map<String, Object> cases = new HashMap<>();
        cases.put("malformed JSON", "{\"target\": ");
        cases.put("wrong type", "{\"target\":{\"type\":\"opaque\",\"value\":\"x\"},\"actor\":\"a\",\"holder\":\"h\",\"ttlSeconds\":\"30\"}");
        cases.put("fraction", "{\"target\":{\"type\":\"opaque\",\"value\":\"x\"},\"actor\":\"a\",\"holder\":\"h\",\"ttlSeconds\":1.5}");
        cases.put("unknown type", "{\"target\":{\"type\":\"dns\",\"value\":\"x\"},\"actor\":\"a\",\"holder\":\"h\",\"ttlSeconds\":30}");
        cases.put("ttl too large", "{\"target\":{\"type\":\"opaque\",\"value\":\"x\"},\"actor\":\"a\",\"holder\":\"h\",\"ttlSeconds\":3601}");
        cases.put("int overflow", "{\"target\":{\"type\":\"opaque\",\"value\":\"x\"},\"actor\":\"a\",\"holder\":\"h\",\"ttlSeconds\":99999999999}");
        cases.put("metadata not object", "{\"target\":{\"type\":\"opaque\",\"value\":\"x\"},\"actor\":\"a\",\"holder\":\"h\",\"ttlSeconds\":30,\"metadata\":[1]}");
        cases.put("metadata too big", Map.of("target", Map.of("type", "opaque", "value", "x"), "actor", "a",
                "holder", "h", "ttlSeconds", 30, "metadata", Map.of("blob", "x".repeat(9000))));
        cases.put("lifetime below ttl", Map.of("target", Map.of("type", "opaque", "value", "x"), "actor", "a",
                "holder", "h", "ttlSeconds", 30, "maxLifetimeSeconds", 10));
        cases.put("lifetime over cap", Map.of("target", Map.of("type", "opaque", "value", "x"), "actor", "a",
                "holder", "h", "ttlSeconds", 30, "maxLifetimeSeconds", 604801));
        cases.put("control character", Map.of("target", Map.of("type", "opaque", "value", "a\u0007b"), "actor", "a",
                "holder", "h", "ttlSeconds", 30));
        cases.put("value too long", Map.of("target", Map.of("type", "opaque", "value", "v".repeat(513)), "actor", "a",
                "holder", "h", "ttlSeconds", 30));
        cases.put("holder too long", Map.of("target", Map.of("type", "opaque", "value", "x"), "actor", "a",
                "holder", "h".repeat(129), "ttlSeconds", 30));
        cases.put("empty body", "");
        cases.put("number for a string", "{\"target\":{\"type\":\"opaque\",\"value\":\"x\"},\"actor\":\"a\",\"holder\":123,\"ttlSeconds\":30}");
        cases.put("boolean for a string", "{\"target\":{\"type\":\"opaque\",\"value\":true},\"actor\":\"a\",\"holder\":\"h\",\"ttlSeconds\":30}");
        cases.put("unknown field", "{\"target\":{\"type\":\"opaque\",\"value\":\"x\"},\"actor\":\"a\",\"holder\":\"h\",\"ttlSecond\":30}");
        cases.put("unpaired surrogate", "{\"target\":{\"type\":\"opaque\",\"value\":\"x\"},\"actor\":\"a\",\"holder\":\"h\\ud800\",\"ttlSeconds\":30}");
        cases.put("NUL in metadata key", "{\"target\":{\"type\":\"opaque\",\"value\":\"x\"},\"actor\":\"a\",\"holder\":\"h\",\"ttlSeconds\":30,\"metadata\":{\"a\\u0000\":1}}");
        cases.put("metadata too deep", "{\"target\":{\"type\":\"opaque\",\"value\":\"x\"},\"actor\":\"a\",\"holder\":\"h\",\"ttlSeconds\":30,\"metadata\":"
                + "{\"a\":".repeat(17) + "1" + "}".repeat(17) + "}");
        cases.put("NUL in metadata", Map.of("target", Map.of("type", "opaque", "value", "x"), "actor", "a",
                "holder", "h", "ttlSeconds", 30, "metadata", Map.of("k", "a\u0000b")));
        long[] rowsBefore = rowCounts();
        cases.forEach((name, body) -> {
            Api.Response response = api.post("/v1/leases", w, body);
            assertThat(response.status()).as(name).isEqualTo(400);
            assertThat(response.code()).as(name).isEqualTo("VALIDATION_FAILED");
            assertThat(response.body().get("errors").isArray()).as(name).isTrue();
        });
        assertThat(rowCounts()).as("rows after rejected requests").isEqualTo(rowsBefore);

        JsonNode lease = acquire(w, "valid", "a", "h", 30).body();
        String renewPath = "/v1/leases/" + lease.get("leaseId").asString() + "/renew";
        assertThat(api.post(renewPath, w, Map.of()).code()).isEqualTo("VALIDATION_FAILED");
        assertThat(api.post(renewPath, w, Map.of("fencingToken", lease.get("fencingToken").asLong(), "ttlSeconds", 0))
                .status()).isEqualTo(400);
        assertThat(api.post(renewPath, w, "{\"fencingToken\":\"abc\"}").status()).isEqualTo(400);
    }

    @Test
    void bodiesOver64KibAnswer413WhetherTheirLengthIsDeclaredOrChunked() {
        String w = writer("alice");
        String big = "{\"target\":{\"type\":\"opaque\",\"value\":\"x\"},\"actor\":\"a\",\"holder\":\"h\",\"ttlSeconds\":30,"
                + "\"jobId\":\"" + "j".repeat(70_000) + "\"}";
        long[] rowsBefore = rowCounts();
        Api.Response declared = api.post("/v1/leases", w, big);
        assertThat(declared.status()).isEqualTo(413);
        assertThat(declared.code()).isEqualTo("REQUEST_TOO_LARGE");
        Api.Response chunked = api.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(
                        "http://127.0.0.1:" + port + "/v1/leases")).header("Content-Type", "application/json")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofInputStream(
                        () -> new java.io.ByteArrayInputStream(big.getBytes(java.nio.charset.StandardCharsets.UTF_8)))), w);
        assertThat(chunked.status()).isEqualTo(413);
        assertThat(chunked.code()).isEqualTo("REQUEST_TOO_LARGE");
        assertThat(rowCounts()).isEqualTo(rowsBefore);

        Map<String, Object> small = new HashMap<>(Api.acquireBody("chunked-ok", "a", "h", 30));
        String smallJson = tools.jackson.databind.json.JsonMapper.builder().build().writeValueAsString(small);
        Api.Response ok = api.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(
                        "http://127.0.0.1:" + port + "/v1/leases")).header("Content-Type", "application/json")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofInputStream(
                        () -> new java.io.ByteArrayInputStream(smallJson.getBytes(java.nio.charset.StandardCharsets.UTF_8)))), w);
        assertThat(ok.status()).isEqualTo(201);
    }

    private long[] rowCounts() {
        return new long[] {
                jdbc.sql("SELECT count(*) FROM lease_key").query(Long.class).single(),
                jdbc.sql("SELECT count(*) FROM lease").query(Long.class).single(),
                jdbc.sql("SELECT count(*) FROM lease_event").query(Long.class).single()};
    }

    @Test
    void unexpectedRoutesAndMethodsAreProblemsToo() {
        Api.Response r = api.get("/v1/nothing-here", writer("alice"));
        assertThat(r.status()).isEqualTo(404);
        assertThat(r.code()).isEqualTo("NOT_FOUND");
        Api.Response m = api.post("/v1/leases/current", writer("alice"), Map.of());
        assertThat(m.status()).isEqualTo(405);
        assertThat(m.code()).isEqualTo("METHOD_NOT_ALLOWED");
        Api.Response media = api.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(
                "http://127.0.0.1:" + port + "/v1/leases")).header("Content-Type", "text/plain")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("hello")), writer("alice"));
        assertThat(media.status()).isEqualTo(415);
        assertThat(media.code()).isEqualTo("UNSUPPORTED_MEDIA_TYPE");
        // Refused before Spring MVC: by Spring Security's firewall ("//") and by Tomcat itself (%00).
        for (String path : List.of("/v1/leases//renew", "/v1/leases/%00/release")) {
            Api.Response refused = api.post(path, writer("alice"), Map.of("fencingToken", 1));
            assertThat(refused.status()).as(path).isEqualTo(400);
            assertThat(refused.header("Content-Type")).as(path).startsWith("application/problem+json");
            assertThat(refused.code()).as(path).isEqualTo("REQUEST_REJECTED");
        }
    }
}
