package io.leasekeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.RawHttp;
import io.leasekeeper.support.TestDatabase;
import io.leasekeeper.support.TestTokens;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import tools.jackson.databind.json.JsonMapper;

/**
 * Random requests against the running service: whatever arrives, the answer is a success or a problem with a
 * contract code, never a 5xx. The first property sends what an HTTP client sends (random bodies, query strings and
 * headers), and a refused request changes no row of any table; the second writes requests as bytes, with what no
 * client sends (any method, escapes that are not UTF-8, more parameters than Tomcat takes, control and 8-bit
 * characters in headers, any body type and framing), with a valid token, a wrong one or none.
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

    /** A request as bytes; jqwik reports a failing one by its description. */
    record RawCall(String description, byte[] bytes, boolean head) {
        @Override
        public String toString() {
            return description;
        }
    }

    /** How a raw request's body is delimited. */
    enum Framing {
        NONE, LENGTH, CHUNKED, MALFORMED_CHUNK, UNKNOWN_CODING
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

    @Property(tries = 400)
    void noRawRequestMakesA5xxAndEveryRefusalIsAProblem(@ForAll("rawCalls") RawCall call) {
        RawHttp.Answer answer = RawHttp.send(port, call.bytes());

        Statistics.label("outcome").collect(answer.status() < 400 ? "success" : answer.status() + " " + answer.code());
        assertThat(answer.status()).as(call.description()).isLessThan(500);
        // The console's files are no API: a Range they cannot serve is their file handler's plain 416.
        boolean consoleRange = answer.status() == 416 && call.description().startsWith("GET /console/");
        if (answer.status() >= 400 && !call.head() && !consoleRange) {
            assertThat(answer.isProblem()).as("%s%n-> %s %s", call, answer.headers(), answer.body()).isTrue();
        }
    }

    @Provide
    Arbitrary<RawCall> rawCalls() {
        String lease = "/v1/leases/" + knownLeaseId;
        Arbitrary<String> anyMethod = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.of("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT",
                        "get")),
                Tuple.of(1, Arbitraries.strings().withCharRange('A', 'Z').ofMinLength(1).ofMaxLength(8)));
        Arbitrary<String> anyPath = Arbitraries.frequencyOf(Tuple.of(3, Arbitraries.of("/v1/leases", lease, "/error",
                        "/console/index.html", "/console/settings.json", "/actuator/health", "/")),
                Tuple.of(1, rawText().list().ofMinSize(1).ofMaxSize(3)
                        .map(segments -> "/v1/leases/" + String.join("/", segments))));
        // Mostly a route with its own method, so that most requests get past routing to what reads them.
        Arbitrary<String> methodAndPath = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.of("GET /v1/leases", "GET /v1/leases/current", "GET " + lease,
                        "GET " + lease + "/events", "GET /v3/api-docs", "GET /console/index.html", "HEAD /v1/leases")),
                Tuple.of(3, Arbitraries.of("POST /v1/leases", "POST " + lease + "/renew", "POST " + lease + "/release",
                        "POST /v1/admin/leases/" + knownLeaseId + "/revoke")),
                Tuple.of(2, Combinators.combine(anyMethod, anyPath).as((m, p) -> m + " " + p)));
        Arbitrary<String> query = Arbitraries.frequencyOf(Tuple.of(3, Arbitraries.just("")),
                Tuple.of(3, rawParameter().list().ofMinSize(1).ofMaxSize(6).map(l -> "?" + String.join("&", l))),
                Tuple.of(1, Arbitraries.integers().between(995, 1005).map(n -> "?limit=5" + "&x=1".repeat(n))));
        Arbitrary<String> authorization = Arbitraries.frequencyOf(
                Tuple.of(6, Arbitraries.just("Authorization: Bearer " + TestTokens.token("fuzzer", TENANT, TestTokens.WRITE))),
                Tuple.of(3, Arbitraries.just("Authorization: Bearer "
                        + TestTokens.token("fuzz-admin", TENANT, List.of("leases:admin", "leases:write")))),
                Tuple.of(2, Arbitraries.of("", "Authorization: Bearer not-a-token", "Authorization: Basic YTpi",
                        "Authorization: Bearer \u00e9\u0001")));
        Arbitrary<String> contentType = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.of("application/json", "application/json;charset=UTF-8")),
                Tuple.of(2, Arbitraries.of("", "application/json;charset=nope", "application/json;charset=\"",
                        "application/json;charset=UTF-16", "application/x-www-form-urlencoded", "multipart/form-data",
                        "multipart/form-data; boundary=xx", "text/plain", "application/problem+json", "/", ";;", "*/*",
                        "application/*")));
        Arbitrary<byte[]> body = Arbitraries.frequencyOf(
                Tuple.of(5, body().map(b -> b.getBytes(StandardCharsets.UTF_8))),
                Tuple.of(1, Arbitraries.of("{\"fencingToken\":" + knownToken + ",\"fencingToken\":1}",
                        "{\"target\":{\"type\":\"opaque\",\"value\":\"n\"},\"actor\":\"a\",\"holder\":\"h\","
                                + "\"ttlSeconds\":30,\"metadata\":{\"n\":[1e400]}}", "--xx\r\n\r\n--xx--")
                        .map(b -> b.getBytes(StandardCharsets.UTF_8))),
                Tuple.of(1, rawParameter().list().ofMaxSize(6)
                        .map(l -> String.join("&", l).getBytes(StandardCharsets.ISO_8859_1))),
                Tuple.of(1, Arbitraries.just(("a=1" + "&a=1".repeat(1000)).getBytes(StandardCharsets.US_ASCII))),
                Tuple.of(1, Arbitraries.bytes().array(byte[].class).ofMaxSize(64)));
        return Combinators.combine(methodAndPath, query, authorization, rawHeader().list().ofMaxSize(3), contentType,
                        body, Arbitraries.frequency(Tuple.of(3, Framing.NONE), Tuple.of(8, Framing.LENGTH),
                                Tuple.of(2, Framing.CHUNKED), Tuple.of(1, Framing.MALFORMED_CHUNK),
                                Tuple.of(1, Framing.UNKNOWN_CODING)))
                .as((route, q, auth, headers, type, content, framing) -> rawCall(route.substring(0, route.indexOf(' ')),
                        route.substring(route.indexOf(' ') + 1) + q, auth, headers, type, content, framing));
    }

    private static RawCall rawCall(String method, String target, String authorization, List<String> headers,
            String contentType, byte[] body, Framing framing) {
        List<String> all = new ArrayList<>(headers);
        if (!authorization.isEmpty()) {
            all.add(authorization);
        }
        if (!contentType.isEmpty()) {
            all.add("Content-Type: " + contentType);
        }
        ByteArrayOutputStream framed = new ByteArrayOutputStream();
        switch (framing) {
            case LENGTH -> {
                all.add("Content-Length: " + body.length);
                framed.writeBytes(body);
            }
            case CHUNKED -> {
                all.add("Transfer-Encoding: chunked");
                if (body.length > 0) {
                    framed.writeBytes(ascii(Integer.toHexString(body.length) + "\r\n"));
                    framed.writeBytes(body);
                    framed.writeBytes(ascii("\r\n"));
                }
                framed.writeBytes(ascii("0\r\n\r\n"));
            }
            case MALFORMED_CHUNK -> {
                all.add("Transfer-Encoding: chunked");
                framed.writeBytes(ascii("zz\r\n"));
                framed.writeBytes(body);
                framed.writeBytes(ascii("\r\n0\r\n\r\n"));
            }
            case UNKNOWN_CODING -> all.add("Transfer-Encoding: gzip");
            case NONE -> {
            }
        }
        ByteArrayOutputStream request = new ByteArrayOutputStream();
        request.writeBytes(RawHttp.request(method, target, all, (byte[]) null));
        request.writeBytes(framed.toByteArray());
        String description = method + " " + target + " " + all + " " + framing + " "
                + new String(body, StandardCharsets.ISO_8859_1);
        return new RawCall(description.substring(0, Math.min(description.length(), 600)), request.toByteArray(),
                method.equals("HEAD"));
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * Text for a request line: mostly letters and valid escapes, now and then an escape that is malformed or not UTF-8,
     * a NUL, an encoded slash, a byte no request line may hold.
     */
    private static Arbitrary<String> rawText() {
        return Arbitraries.frequencyOf(
                        Tuple.of(12, Arbitraries.of("a", "Z", "0", "-", ".", "_", "~", "%25", "%E2%82%AC", "=", "+")),
                        Tuple.of(1, Arbitraries.of("%", "%zz", "%4", "%C3%28", "%ED%A0%80", "%00", "%2F", "%5C", ";", "&",
                                "..", "\u00e9", "\u007f", "|", " ")))
                .list().ofMaxSize(6).map(parts -> String.join("", parts));
    }

    private static Arbitrary<String> rawParameter() {
        return Combinators.combine(Arbitraries.of("program", "actor", "targetType", "target", "owner", "holder", "state",
                "limit", "cursor", "operation", "waitSeconds", "x", ""), rawText()).as((n, v) -> n + "=" + v);
    }

    /** A header line: a name the stack reads or any other, a value well-formed or not, with control and 8-bit bytes. */
    private static Arbitrary<String> rawHeader() {
        Arbitrary<String> name = Arbitraries.frequencyOf(Tuple.of(16,
                Arbitraries.of("Accept", "Accept-Charset", "Accept-Language", "Accept-Encoding", "Range", "If-Range",
                        "Cookie", "Expect", "If-None-Match", "If-Modified-Since", "Origin", "X-Request-Id", "traceparent",
                        "Idempotency-Key", "X-Forwarded-For", "X-Forwarded-Proto", "Forwarded", "Upgrade")),
                Tuple.of(2, Arbitraries.strings().withChars("abXY-_!#$%&'*+.^`|~").ofMinLength(1).ofMaxLength(10)),
                Tuple.of(1, Arbitraries.strings().withChars("abXY-:@ ()\u00e9").ofMinLength(1).ofMaxLength(10)));
        Arbitrary<String> value = Arbitraries.frequencyOf(Tuple.of(12,
                Arbitraries.of("*/*", "application/json", "text/html", ";;;", "a/b/c", "\"", "bytes=0-1", "bytes=zz",
                        "bytes=5-1", "100-continue", "100-nothing", "a=b; c", "\"a", "h2c", "websocket", "",
                        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")),
                Tuple.of(6, Arbitraries.strings().withCharRange(' ', '~').ofMaxLength(40)),
                Tuple.of(1, Arbitraries.strings().withCharRange('\u0000', '\u00ff').ofMaxLength(20)));
        return Combinators.combine(name, value).as((n, v) -> n + ": " + v);
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
                query().map(q -> "/v1/leases/current?" + q),
                Arbitraries.integers().between(995, 1005).map(n -> "/v1/leases?limit=5" + "&x=1".repeat(n)));
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
