package io.leasekeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.TestDatabase;
import io.leasekeeper.support.TestTokens;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import tools.jackson.databind.json.JsonMapper;

/**
 * Random request bodies, query strings and headers against the running service: whatever arrives, the
 * answer is a success or a problem with a contract code, never a 5xx, and a refused request changes no
 * row of any table.
 */
class ServiceFuzzTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String TENANT = "fuzz-" + UUID.randomUUID().toString().substring(0, 8);
    private static ConfigurableApplicationContext app;
    private static Api api;
    private static JdbcClient jdbc;
    private static int port;
    private static String knownLeaseId;
    private static long knownToken;

    record Call(String method, String path, String body, String token, Map<String, String> headers) {
    }

    @BeforeContainer
    static void start() {
        TestDatabase.Connection db = TestDatabase.connection();
        app = new SpringApplicationBuilder(LeasekeeperApplication.class).run(
                "--server.port=0", "--leasekeeper.sweeper.enabled=false", "--leasekeeper.idempotency.cleanup-enabled=false", "--leasekeeper.audit.cleanup-enabled=false",
                "--spring.datasource.url=" + db.url(), "--spring.datasource.username=" + db.username(),
                "--spring.datasource.password=" + db.password(),
                "--spring.security.oauth2.resourceserver.jwt.public-key-location=" + TestTokens.publicKeyLocation(),
                "--logging.level.io.leasekeeper=warn");
        port = Integer.parseInt(app.getEnvironment().getProperty("local.server.port"));
        api = new Api(port);
        jdbc = app.getBean(JdbcClient.class);
        var known = api.post("/v1/leases", TestTokens.token("fuzzer", TENANT, TestTokens.WRITE),
                Api.acquireBody("known", "job", "h", 3600)).body();
        knownLeaseId = known.get("leaseId").asString();
        knownToken = known.get("fencingToken").asLong();
    }

    @AfterContainer
    static void stop() {
        if (app != null) {
            app.close();
        }
    }

    @Property(tries = 2000)
    void noInputMakesA5xxOrChangesRowsWhenRefused(@ForAll("calls") Call call) {
        // The outcome mix is reported with the run, so a fuzz that only ever meets one refusal shows.
        long[] before = rowCounts();
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + call.path()));
        call.headers().forEach(request::header);
        if (call.method().equals("GET")) {
            request.GET();
        } else {
            request.POST(HttpRequest.BodyPublishers.ofString(call.body(), StandardCharsets.UTF_8));
        }
        Api.Response response = api.send(request, call.token());

        Statistics.label("outcome").collect(response.status() < 400 ? "success" : response.code());
        assertThat(response.status()).as("%s %s %s", call.method(), call.path(), call.body()).isLessThan(500);
        if (response.status() >= 400) {
            assertThat(response.header("Content-Type")).startsWith("application/problem+json");
            assertThat(response.code()).as(response.raw()).matches("[A-Z_]+");
            assertThat(response.body().get("status").asInt()).isEqualTo(response.status());
            assertThat(rowCounts()).as("rows after a refused %s %s", call.method(), call.path()).isEqualTo(before);
        } else {
            assertThat(response.body().has("leaseId") || response.body().has("items")).as(response.raw()).isTrue();
        }
    }

    @Provide
    Arbitrary<Call> calls() {
        Arbitrary<String> leaseId = Arbitraries.oneOf(Arbitraries.just(knownLeaseId),
                Arbitraries.create(() -> UUID.randomUUID().toString()), nastyStrings().map(ServiceFuzzTest::urlEncode),
                Arbitraries.just(knownLeaseId), Arbitraries.just(knownLeaseId));
        Arbitrary<String> postPath = Arbitraries.oneOf(Arbitraries.just("/v1/leases"),
                leaseId.map(id -> "/v1/leases/" + id + "/renew"), leaseId.map(id -> "/v1/leases/" + id + "/release"),
                leaseId.map(id -> "/v1/admin/leases/" + id + "/revoke"));
        Arbitrary<String> getPath = Arbitraries.oneOf(leaseId.map(id -> "/v1/leases/" + id),
                leaseId.map(id -> "/v1/leases/" + id + "/events"), query().map(q -> "/v1/leases?" + q),
                query().map(q -> "/v1/leases/current?" + q));
        Arbitrary<String> token = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(5, Arbitraries.just(TestTokens.token("fuzzer", TENANT, TestTokens.WRITE))),
                net.jqwik.api.Tuple.of(3, Arbitraries.just(TestTokens.token("fuzz-admin", TENANT,
                        List.of("leases:admin", "leases:write")))),
                net.jqwik.api.Tuple.of(1, Arbitraries.just(TestTokens.token("fuzz-reader", TENANT, TestTokens.READ))));
        Arbitrary<Call> posts = Combinators.combine(postPath, body(), token, headers())
                .as((path, body, t, h) -> new Call("POST", path, body, t, h));
        Arbitrary<Call> gets = Combinators.combine(getPath, token, headers())
                .as((path, t, h) -> new Call("GET", path, "", t, h));
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(3, posts), net.jqwik.api.Tuple.of(1, gets));
    }

    private Arbitrary<String> body() {
        Arbitrary<String> field = Arbitraries.of("program", "target", "actor", "operation", "holder", "ttlSeconds",
                "maxLifetimeSeconds", "jobId", "traceId", "metadata", "fencingToken", "reason", "unknownField");
        Arbitrary<String> object = Combinators.combine(field, jsonValue(3)).as((f, v) -> "\"" + f + "\":" + v)
                .list().ofMaxSize(8).map(members -> "{" + String.join(",", members) + "}");
        Arbitrary<String> nearlyValid = Combinators.combine(targetJson(), jsonValue(2), Arbitraries.integers().between(-5, 4000))
                .as((target, extra, ttl) -> "{\"target\":" + target + ",\"actor\":\"job\",\"holder\":\"h\",\"ttlSeconds\":"
                        + ttl + ",\"metadata\":{\"x\":" + extra + "}}");
        Arbitrary<String> tokenBody = Combinators.combine(
                        Arbitraries.frequency(net.jqwik.api.Tuple.of(3, knownToken), net.jqwik.api.Tuple.of(1, knownToken - 1)),
                        Arbitraries.integers().between(0, 4000))
                .as((t, ttl) -> "{\"fencingToken\":" + t + ",\"ttlSeconds\":" + ttl + "}");
        Arbitrary<String> validAcquire = Arbitraries.strings().withCharRange('a', 'z').ofMinLength(1).ofMaxLength(3)
                .map(v -> "{\"target\":{\"type\":\"opaque\",\"value\":\"" + v + "\"},\"actor\":\"job\",\"holder\":\"h\","
                        + "\"ttlSeconds\":60}");
        Arbitrary<String> broken = object.map(s -> s.substring(0, Math.max(0, s.length() / 2)));
        return Arbitraries.oneOf(object, nearlyValid, tokenBody, validAcquire, broken, jsonValue(2),
                Arbitraries.just("{\"reason\":\"fuzz\"}"), Arbitraries.just(""));
    }

    private Arbitrary<String> targetJson() {
        return Combinators.combine(Arbitraries.of("opaque", "host", "ip", "url", "dns", ""), nastyStrings())
                .as((type, value) -> "{\"type\":\"" + type + "\",\"value\":" + JSON.writeValueAsString(value) + "}");
    }

    private Arbitrary<String> jsonValue(int depth) {
        Arbitrary<String> scalar = Arbitraries.oneOf(
                nastyStrings().map(JSON::writeValueAsString),
                Arbitraries.of("\"\\u0000\"", "\"a\\ud800b\"", "\"\\udfff\"", "99999999999999999999", "-1", "0",
                        "1.5", "1e400", "true", "false", "null", "\"30\""),
                Arbitraries.longs().map(String::valueOf));
        if (depth == 0) {
            return scalar;
        }
        Arbitrary<String> array = jsonValue(depth - 1).list().ofMaxSize(3).map(l -> "[" + String.join(",", l) + "]");
        Arbitrary<String> object = Combinators.combine(nastyStrings(), jsonValue(depth - 1))
                .as((k, v) -> JSON.writeValueAsString(k) + ":" + v).list().ofMaxSize(3)
                .map(l -> "{" + String.join(",", l) + "}");
        return Arbitraries.oneOf(scalar, array, object, targetJson());
    }

    private Arbitrary<String> query() {
        Arbitrary<String> name = Arbitraries.of("program", "actor", "targetType", "target", "owner", "holder",
                "state", "limit", "cursor", "operation", "other");
        return Combinators.combine(name, nastyStrings()).as((n, v) -> n + "=" + urlEncode(v))
                .list().ofMaxSize(5).map(l -> String.join("&", l));
    }

    private Arbitrary<Map<String, String>> headers() {
        Arbitrary<String> headerValue = Arbitraries.strings().withCharRange(' ', '~').ofMaxLength(300);
        return Combinators.combine(
                Arbitraries.frequency(net.jqwik.api.Tuple.of(8, "application/json"), net.jqwik.api.Tuple.of(1, "text/plain")),
                Arbitraries.oneOf(Arbitraries.just(""), headerValue),
                Arbitraries.oneOf(Arbitraries.just(""), headerValue,
                        Arbitraries.just("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")))
                .as((contentType, idempotencyKey, traceparent) -> {
                    var h = new java.util.LinkedHashMap<String, String>();
                    h.put("Content-Type", contentType);
                    if (!idempotencyKey.isBlank()) {
                        h.put("Idempotency-Key", idempotencyKey);
                    }
                    if (!traceparent.isBlank()) {
                        h.put("traceparent", traceparent);
                    }
                    return h;
                });
    }

    private static Arbitrary<String> nastyStrings() {
        return Arbitraries.oneOf(
                Arbitraries.strings().all().ofMaxLength(20),
                Arbitraries.strings().withCharRange('a', 'z').ofMinLength(1).ofMaxLength(70),
                Arbitraries.of("", " ", "a", "JOB", "-x", "10.0.0.1", "[::1]", "bücher.de", "http://u:p@h/",
                        "http://Example.COM:80/a/../b", "fe80::1%eth0", "active", "any", "expired", "0", "1001",
                        "x".repeat(600), "%00", "\u0000", "\u202e", "null"));
    }

    private static String urlEncode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static long[] rowCounts() {
        return new long[] {
                jdbc.sql("SELECT count(*) FROM lease_key").query(Long.class).single(),
                jdbc.sql("SELECT count(*) FROM lease").query(Long.class).single(),
                jdbc.sql("SELECT count(*) FROM lease_event").query(Long.class).single(),
                jdbc.sql("SELECT count(*) FROM idempotency_record").query(Long.class).single(),
                jdbc.sql("SELECT coalesce(sum(hashtext(l.state || l.expires_at::text || coalesce(l.renewed_at::text, ''))), 0) FROM lease l")
                        .query(Long.class).single()};
    }
}
