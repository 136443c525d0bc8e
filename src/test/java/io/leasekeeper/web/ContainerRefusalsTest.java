package io.leasekeeper.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.RawHttp;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * What the servlet container and Spring MVC refuse on their own is a 4xx problem with the contract's code, never a
 * 5xx (a tenant with a valid token could otherwise fire the LeasekeeperServerErrors alert at will), and no test's
 * requests log a stack trace. No HTTP client library sends these requests, so each is written as bytes.
 */
@ExtendWith(OutputCaptureExtension.class)
class ContainerRefusalsTest extends IntegrationTest {

    private static final String FORM = "Content-Type: application/x-www-form-urlencoded";

    @Test
    void moreQueryParametersThanTomcatTakesAnswer400RequestRejected() {
        String w = writer("alice");
        String thousand = "limit=5" + "&x=1".repeat(999);
        assertThat(get("/v1/leases?" + thousand, w).status()).isEqualTo(200);

        String leaseId = acquire(w, "params", "job", "h", 30).body().get("leaseId").asString();
        assertEachRefused(List.of("/v1/leases", "/v1/leases/current", "/v1/leases/" + leaseId,
                "/v1/leases/" + leaseId + "/events"), path -> get(path + "?" + thousand + "&x=1", w), 400,
                "REQUEST_REJECTED");
    }

    @Test
    void queryParametersTomcatCannotDecodeAnswer400RequestRejected() {
        String w = writer("alice");
        assertEachRefused(List.of("holder=%zz", "holder=%", "holder=%C3%28", "holder=%ED%A0%80", "=x", "limit=5&=x"),
                query -> get("/v1/leases?" + query, w), 400, "REQUEST_REJECTED");
    }

    @Test
    void formBodiesAreRefusedAsProblemsAndNeverParsed() {
        String w = writer("alice");
        String many = "a=1" + "&a=1".repeat(1000);
        // BodyLimit answers a form body from its header, so neither Tomcat nor Spring's form filter (which parsed
        // these itself and failed with a 500 on the escape) reads a parameter of it.
        assertEachRefused(List.of("a=1", many, "a=%zz"),
                body -> send("POST", "/v1/leases", w, List.of(FORM), body), 415, "UNSUPPORTED_MEDIA_TYPE");
        assertEachRefused(List.of("PUT", "PATCH", "DELETE"),
                method -> send(method, "/v1/leases/" + UUID.randomUUID(), w, List.of(FORM), "a=%zz"), 415,
                "UNSUPPORTED_MEDIA_TYPE");
        assertRefused(send("POST", "/v1/leases", w, List.of(FORM), "a=" + "b".repeat(BodyLimit.MAX_BODY_BYTES)), 413,
                "REQUEST_TOO_LARGE");
    }

    @Test
    void multipartBodiesAndWildcardTypesAreNotParsedAndAnswer415() {
        String w = writer("alice");
        assertEachRefused(List.of("multipart/form-data", "multipart/form-data; boundary=xx", "multipart/mixed",
                        "*/*", "application/*", "*/*;charset=UTF-8"),
                type -> send("POST", "/v1/leases", w, List.of("Content-Type: " + type), "--xx\r\ngarbage"), 415,
                "UNSUPPORTED_MEDIA_TYPE");
    }

    @Test
    void aHeaderValueTheFirewallRefusesWhenAControllerReadsItAnswers400() {
        String w = writer("alice");
        List<String> values = List.of("\u0080", "key-\u009f");
        assertEachRefused(values, value -> send("GET", "/v1/leases", w, List.of("Idempotency-Key: " + value), null),
                400, "REQUEST_REJECTED");
        assertEachRefused(values, value -> send("POST", "/v1/leases", w,
                List.of("Idempotency-Key: " + value, "Content-Type: application/json"), "{}"), 400, "REQUEST_REJECTED");
    }

    @Test
    void aPathParameterIsRefusedBeforeAnythingParsesItsEscapes() {
        String w = writer("alice");
        assertEachRefused(List.of("/v1/leases/;%", "/v1/leases/x;a=%zz", "/v1/leases;jsessionid=1", "/console/;%zz"),
                path -> get(path, w), 400, "REQUEST_REJECTED");
    }

    @Test
    void anAcceptHeaderNobodyCanParseStillGetsItsNotAcceptableProblem() {
        String w = writer("alice");
        assertEachRefused(List.of(";;;", "a/b/c", "\"", "text/html", "\"/!", "text/\"x"),
                accept -> send("GET", "/v1/leases", w, List.of("Accept: " + accept), null), 406, "NOT_ACCEPTABLE");
    }

    @Test
    void errorsDispatchedToTheErrorPageAreProblemsOfTheRequestsPath() {
        String w = writer("alice");
        RawHttp.Answer trace = send("TRACE", "/v1/leases", w, List.of(), null);
        assertRefused(trace, 405, "METHOD_NOT_ALLOWED");
        assertThat(trace.json().get("instance").asString()).isEqualTo("/v1/leases");
        // The console's files are read only; another method is a problem like any route's.
        assertRefused(send("POST", "/console/index.html", w, List.of("Content-Type: application/json"), "{}"), 404,
                "NOT_FOUND");
        // The console's files are no API: a Range they cannot serve is a plain 416 of theirs.
        assertThat(send("GET", "/console/index.html", null, List.of("Range: bytes=zz"), null).status()).isEqualTo(416);
        assertRefused(RawHttp.send(port, "POST /v1/leases HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                + "Authorization: Bearer " + w + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                + "\r\nzz\r\n{}\r\n0\r\n\r\n"), 400, "REQUEST_REJECTED");
        // The page itself is no route of the API.
        assertRefused(send("GET", "/error", w, List.of(), null), 404, "NOT_FOUND");
    }

    @Test
    void requestsTomcatRefusesBeforeAnyServletAre4xxProblems() {
        String w = writer("alice");
        assertRefused(send("POST", "/v1/leases", w, List.of("Transfer-Encoding: gzip"), null), 400, "REQUEST_REJECTED");
        assertRefused(RawHttp.send(port, "CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\nConnection: close\r\n\r\n"), 400,
                "REQUEST_REJECTED");
        assertRefused(RawHttp.send(port, "GET /v1/leases HTTP/1.2\r\nHost: localhost\r\nConnection: close\r\n\r\n"), 400,
                "REQUEST_REJECTED");
        assertRefused(send("GET", "/v1/leases", w, List.of("X-Note: a\u0001b"), null), 400, "REQUEST_REJECTED");
        assertRefused(send("GET", "/v1/leases", w, List.of("X Note: b"), null), 400, "REQUEST_REJECTED");
        assertRefused(send("GET", "/v1/leases", w, Collections.nCopies(101, "X-Note: b"), null), 400, "REQUEST_REJECTED");
        assertRefused(send("GET", "/v1/leases", w, List.of("X-Note: " + "b".repeat(9000)), null), 400, "REQUEST_REJECTED");
        assertRefused(send("POST", "/v1/leases", w, List.of("Expect: 100-nothing"), "{}"), 417, "REQUEST_REJECTED");
    }

    /** A refusal is the client's mistake: at most a line of log, never an ERROR and never a stack trace. */
    @AfterEach
    void noStackTraceLogged(CapturedOutput output) {
        assertThat(output.getAll()).doesNotContain(" ERROR ").doesNotContainPattern("\n\\s+at [\\w.$]+\\(");
    }

    private RawHttp.Answer get(String target, String token) {
        return send("GET", target, token, List.of(), null);
    }

    private RawHttp.Answer send(String method, String target, String token, List<String> headers, String body) {
        List<String> all = new ArrayList<>(headers);
        if (token != null) {
            all.add("Authorization: Bearer " + token);
        }
        return RawHttp.send(port, RawHttp.request(method, target, all, body));
    }

    private static void assertEachRefused(List<String> variants, Function<String, RawHttp.Answer> call, int status,
            String code) {
        variants.forEach(variant -> assertRefused(call.apply(variant), status, code));
    }

    private static void assertRefused(RawHttp.Answer answer, int status, String code) {
        assertThat(answer.status()).as(answer.body()).isEqualTo(status);
        assertThat(answer.isProblem()).as("%s %s", answer.headers(), answer.body()).isTrue();
        assertThat(answer.code()).isEqualTo(code);
    }
}
