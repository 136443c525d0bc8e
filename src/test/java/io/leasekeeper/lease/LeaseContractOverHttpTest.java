package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.Api;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The contract suite over raw HTTP ({@link HttpLeaseApi}, which also holds every answer to the wire's rules), and
 * what only the wire shows: the {@code Location} header, the JSON text of instants and nulls, problem headers,
 * and requests no typed call can send (malformed or mistyped JSON, chunked bodies, paths that are not the API's).
 */
class LeaseContractOverHttpTest extends AbstractLeaseContractTest {

    @Override
    protected LeaseApi as(String token) {
        return new HttpLeaseApi(api, token);
    }

    @Test
    void acquireAnswers201WithItsLocationAndTheRepresentationAsTheContractWritesIt() {
        Map<String, Object> body = new HashMap<>(Api.acquireBody("  repo/main  ", "Indexer", "indexer-7f9c/pod-2", 30));
        body.put("metadata", Map.of("shard", 3));
        Api.Response r = api.post("/v1/leases", writer("svc-indexer"), body);

        assertThat(r.status()).isEqualTo(201);
        JsonNode l = r.body();
        assertThat(r.header("Location")).isEqualTo("/v1/leases/" + l.get("leaseId").asString());
        for (String instant : List.of("acquiredAt", "expiresAt", "maxExpiresAt", "serverTime")) {
            assertThat(l.get(instant).asString()).as(instant).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z");
        }
        for (String empty : List.of("operation", "renewedAt", "endedAt", "endReason", "jobId")) {
            assertThat(l.get(empty)).as(empty).isNotNull();
            assertThat(l.get(empty).isNull()).as(empty).isTrue();
        }
        assertThat(l.get("fencingToken").isIntegralNumber()).isTrue();
        assertThat(l.get("metadata").get("shard").isInt()).isTrue();
    }

    @Test
    void aHeldKeyIsAProblemDocumentWithRetryAfterInWholeSecondsAndOnlyTheHoldersPublicFields() {
        acquire(writer("alice"), "build-42", "runner", "pod-a", 30);
        Api.Response held = acquire(writer("bob"), "build-42", "runner", "pod-b", 30);

        assertThat(held.status()).isEqualTo(409);
        assertThat(held.header("Content-Type")).startsWith("application/problem+json");
        assertThat(held.header("Retry-After")).matches("\\d+");
        List<String> holderFields = new java.util.ArrayList<>();
        held.body().get("holder").propertyNames().forEach(holderFields::add);
        assertThat(holderFields).containsExactlyInAnyOrder("owner", "holder", "expiresAt", "remainingMs");
    }

    @Test
    void aPathThatIsNoLeaseIdAnswers404LeaseNotFound() {
        String w = writer("alice");
        assertThat(api.get("/v1/leases/not-a-uuid", w).status()).isEqualTo(404);
        assertThat(api.get("/v1/leases/1-2-3-4-5", w).code()).isEqualTo("LEASE_NOT_FOUND");
    }

    @Test
    void currentWithoutTheRequiredParametersNamesEachOfThem() {
        Api.Response r = api.get("/v1/leases/current?target=x", writer("alice"));
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.code()).isEqualTo("VALIDATION_FAILED");
        assertThat(r.body().get("errors").size()).isEqualTo(2);
    }

    @Test
    void aLimitThatIsNoNumberAnswers400() {
        String w = writer("alice");
        String leaseId = acquire(w, "limits", "a", "h", 30).body().get("leaseId").asString();
        for (String path : List.of("/v1/leases?limit=abc", "/v1/leases/" + leaseId + "/events?limit=abc")) {
            Api.Response r = api.get(path, w);
            assertThat(r.status()).as(path).isEqualTo(400);
            assertThat(r.code()).as(path).isEqualTo("VALIDATION_FAILED");
            assertThat(r.body().get("errors").get(0).get("field").asString()).as(path).isEqualTo("limit");
        }
    }

    @Test
    void bodiesNoTypedCallCanSendAnswer400ValidationFailedAndChangeNothing() {
        String w = writer("alice");
        String prefix = "{\"target\":{\"type\":\"opaque\",\"value\":\"x\"},\"actor\":\"a\",";
        Map<String, String> cases = new LinkedHashMap<>();
        cases.put("malformed JSON", "{\"target\": ");
        cases.put("empty body", "");
        cases.put("wrong type", prefix + "\"holder\":\"h\",\"ttlSeconds\":\"30\"}");
        cases.put("fraction", prefix + "\"holder\":\"h\",\"ttlSeconds\":1.5}");
        cases.put("int overflow", prefix + "\"holder\":\"h\",\"ttlSeconds\":99999999999}");
        cases.put("metadata not object", prefix + "\"holder\":\"h\",\"ttlSeconds\":30,\"metadata\":[1]}");
        cases.put("number for a string", prefix + "\"holder\":123,\"ttlSeconds\":30}");
        cases.put("boolean for a string",
                "{\"target\":{\"type\":\"opaque\",\"value\":true},\"actor\":\"a\",\"holder\":\"h\",\"ttlSeconds\":30}");
        cases.put("unknown field", prefix + "\"holder\":\"h\",\"ttlSecond\":30}");
        cases.put("unpaired surrogate", prefix + "\"holder\":\"h\\ud800\",\"ttlSeconds\":30}");
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
        assertThat(api.post(renewPath, w, "{\"fencingToken\":\"abc\"}").status()).isEqualTo(400);
    }

    @Test
    void aMemberGivenTwiceIsRefusedNamingItNotReadAsItsLastValue() {
        String w = writer("alice");
        String target = "\"target\":{\"type\":\"opaque\",\"value\":\"twice\"},\"actor\":\"a\",\"ttlSeconds\":30";
        Map<String, Post> cases = new LinkedHashMap<>();
        cases.put("holder", new Post("/v1/leases", "{" + target + ",\"holder\":\"h\",\"holder\":\"mallory\"}"));
        cases.put("target.value", new Post("/v1/leases",
                "{\"target\":{\"type\":\"opaque\",\"value\":\"a\",\"value\":\"b\"},\"actor\":\"a\",\"holder\":\"h\",\"ttlSeconds\":30}"));
        cases.put("metadata.list[1].k", new Post("/v1/leases",
                "{" + target + ",\"holder\":\"h\",\"metadata\":{\"list\":[1,{\"k\":1,\"k\":2}]}}"));
        cases.put("fencingToken", new Post(renewPathOfANewLease(w, "once"), "{\"fencingToken\":1,\"fencingToken\":2}"));

        refusedAsInvalid(w, cases).forEach((member, error) -> {
            assertThat(error.get("field").asString()).as(member).isEqualTo(member);
            assertThat(error.get("message").asString()).as(member).isEqualTo("appears more than once");
        });
    }

    @Test
    void aNumberNoDoubleHoldsIsRefusedWhereverItIsNeverStoredAsInfinity() {
        String w = writer("alice");
        String key = "\"target\":{\"type\":\"opaque\",\"value\":\"x\"},\"actor\":\"a\"";
        Map<String, Post> cases = new LinkedHashMap<>();
        for (String number : List.of("1e400", "-1e400", "NaN", "Infinity", "-Infinity")) {
            cases.put("metadata " + number, new Post("/v1/leases",
                    "{" + key + ",\"holder\":\"h\",\"ttlSeconds\":30,\"metadata\":{\"n\":" + number + "}}"));
            cases.put("nested metadata " + number, new Post("/v1/leases",
                    "{" + key + ",\"holder\":\"h\",\"ttlSeconds\":30,\"metadata\":{\"a\":[{\"b\":[" + number + "]}]}}"));
        }
        cases.put("ttlSeconds", new Post("/v1/leases", "{" + key + ",\"holder\":\"h\",\"ttlSeconds\":1e400}"));
        cases.put("holder", new Post("/v1/leases", "{" + key + ",\"holder\":1e400,\"ttlSeconds\":30}"));
        cases.put("fencingToken", new Post(renewPathOfANewLease(w, "finite"), "{\"fencingToken\":1e400}"));
        refusedAsInvalid(w, cases);

        Api.Response largest = api.post("/v1/leases", w, "{\"target\":{\"type\":\"opaque\",\"value\":\"large\"},"
                + "\"actor\":\"a\",\"holder\":\"h\",\"ttlSeconds\":30,\"metadata\":{\"n\":1.7976931348623157e308}}");
        assertThat(largest.status()).isEqualTo(201);
        assertThat(largest.body().get("metadata").get("n").asDouble()).isEqualTo(Double.MAX_VALUE);
    }

    private String renewPathOfANewLease(String token, String target) {
        return "/v1/leases/" + acquire(token, target, "a", "h", 30).body().get("leaseId").asString() + "/renew";
    }

    /** A body posted to a path, as bytes no typed call sends. */
    private record Post(String path, String body) {
    }

    /** Each case answers 400 VALIDATION_FAILED and changes no row; the first error of each, by case. */
    private Map<String, JsonNode> refusedAsInvalid(String token, Map<String, Post> cases) {
        long[] rowsBefore = rowCounts();
        Map<String, JsonNode> errors = new LinkedHashMap<>();
        cases.forEach((name, post) -> {
            Api.Response response = api.post(post.path(), token, post.body());
            assertThat(response.status()).as(name).isEqualTo(400);
            assertThat(response.code()).as(name).isEqualTo("VALIDATION_FAILED");
            assertThat(response.body().get("errors").isArray()).as(name).isTrue();
            errors.put(name, response.body().get("errors").get(0));
        });
        assertThat(rowCounts()).as("rows after refused requests").isEqualTo(rowsBefore);
        return errors;
    }

    @Test
    void aChunkedBodyOver64KibAnswers413AndASmallChunkedOneIsAccepted() {
        String w = writer("alice");
        String big = "{\"target\":{\"type\":\"opaque\",\"value\":\"x\"},\"actor\":\"a\",\"holder\":\"h\",\"ttlSeconds\":30,"
                + "\"jobId\":\"" + "j".repeat(70_000) + "\"}";
        long[] rowsBefore = rowCounts();
        Api.Response chunked = postChunked(w, big);
        assertThat(chunked.status()).isEqualTo(413);
        assertThat(chunked.code()).isEqualTo("REQUEST_TOO_LARGE");
        assertThat(rowCounts()).isEqualTo(rowsBefore);

        String small = JsonMapper.builder().build().writeValueAsString(Api.acquireBody("chunked-ok", "a", "h", 30));
        assertThat(postChunked(w, small).status()).isEqualTo(201);
    }

    /** A POST whose length is not declared: sent as chunks. */
    private Api.Response postChunked(String token, String json) {
        return api.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/leases"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofInputStream(
                        () -> new ByteArrayInputStream(json.getBytes(StandardCharsets.UTF_8)))), token);
    }

    @Test
    void unexpectedRoutesAndMethodsAreProblemsToo() {
        Api.Response r = api.get("/v1/nothing-here", writer("alice"));
        assertThat(r.status()).isEqualTo(404);
        assertThat(r.code()).isEqualTo("NOT_FOUND");
        Api.Response m = api.post("/v1/leases/current", writer("alice"), Map.of());
        assertThat(m.status()).isEqualTo(405);
        assertThat(m.code()).isEqualTo("METHOD_NOT_ALLOWED");
        Api.Response media = api.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/leases"))
                .header("Content-Type", "text/plain").POST(HttpRequest.BodyPublishers.ofString("hello")), writer("alice"));
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
