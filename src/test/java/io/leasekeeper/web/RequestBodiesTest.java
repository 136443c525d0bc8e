package io.leasekeeper.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.github.benmanes.caffeine.cache.Ticker;
import io.leasekeeper.config.LeasekeeperProperties;
import io.leasekeeper.support.IntegrationTest;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A request's body is read by its handler, after authentication, within its bounds ({@link BodyLimit}); what an
 * answer leaves unread holds its connection only within the same bounds ({@link UnreadBodies}). The senders are raw
 * sockets writing a request chunk by chunk, in the order the test says; the service's clock is the test's, and time
 * passes on it only when the test moves it, while the service waits for a body's bytes that do not exist yet.
 */
class RequestBodiesTest extends IntegrationTest {

    private static final String ACQUIRE_START = "{\"target\":{\"type\":\"opaque\",\"value\":\"x\"},\"actor\":\"a\","
            + "\"holder\":\"h\",\"ttlSeconds\":30,\"jobId\":\"";

    @TestConfiguration
    static class Clock {
        @Bean
        TestTicker ticker() {
            return new TestTicker();
        }
    }

    @Autowired
    TestTicker ticker;

    @Autowired
    LeasekeeperProperties properties;

    /** No read of a body (by a handler or after an answer) outlives its test: the next one knows whose wait it sees. */
    @AfterEach
    void noBodyIsReadAnyMore() {
        ticker.awaitNoRead();
    }

    @Test
    void aChunkedBodyWithoutATokenIsAnswered401AtOnceWithoutWaitingForTheBody() throws Exception {
        try (Sender sender = new Sender()) {
            sender.send(chunkedHead("POST", "/v1/leases", null, "application/json") + chunk("{\"target\":"));
            // The body has no end yet: the answer can only come from a service that did not wait for it.
            problem("without a token", sender.answer(), 401, "UNAUTHENTICATED");
        }
    }

    /**
     * After the 401, what the sender still sends is read into nothing, and only while the service waits for it within
     * the body timeout; then the connection is closed, with no read started after it (not by Tomcat's read timeout,
     * which would come after another). The pending request holds its connection and Tomcat's buffer of it, nothing of
     * its own: no byte was even sent before the answer.
     */
    @Test
    void whatAnUnauthenticatedSenderSendsAfterTheAnswerHoldsItsConnectionOnlyWithinTheBodyTimeout() throws Exception {
        try (Sender sender = new Sender()) {
            sender.send(chunkedHead("POST", "/v1/leases", null, "application/json"));
            assertThat(sender.answer().status()).isEqualTo(401);

            ticker.awaitWaitForBody();
            ticker.advance(properties.requests().bodyTimeout().plusNanos(1));
            sender.sendIfOpen(chunk("{"));

            assertThat(sender.closedByService()).isTrue();
            assertThat(ticker.readingsSinceTheWait()).as("the waiting read ended, and no other started").isOne();
        }
    }

    @Test
    void aClientThatSentItsWholeBodyWithoutAValidTokenGetsItsAnswerAndKeepsItsConnection() throws Exception {
        try (Sender sender = new Sender()) {
            sender.send(chunkedHead("POST", "/v1/leases", "not-a-token", "application/json")
                    + chunk(ACQUIRE_START + "j\"}") + LAST_CHUNK);
            assertThat(sender.answer().status()).isEqualTo(401);

            sender.send("GET /v1/leases HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + reader("alice")
                    + "\r\n\r\n");
            assertThat(sender.answer().status()).isEqualTo(200);
        }
    }

    /**
     * Bodies the API does not take, answered 415 without waiting for them: a form (Tomcat would parse it itself, past
     * the body's bounds: refused from the header, even before authentication) and a multipart body (no parser reads
     * it; its handler's converter refuses it having read one byte).
     */
    @Test
    void formAndMultipartBodiesAreAnswered415WithoutWaitingForThem() throws Exception {
        String form = "application/x-www-form-urlencoded";
        Map<String, String> cases = new LinkedHashMap<>();
        cases.put("form, no token", chunkedHead("POST", "/v1/leases", null, form));
        cases.put("form", chunkedHead("POST", "/v1/leases", writer("alice"), form));
        cases.put("form, DELETE", chunkedHead("DELETE", "/v1/leases/" + UUID.randomUUID(), writer("alice"), form));
        cases.put("multipart", chunkedHead("POST", "/v1/leases", writer("alice"), "multipart/form-data; boundary=b"));
        for (Map.Entry<String, String> request : cases.entrySet()) {
            try (Sender sender = new Sender()) {
                sender.send(request.getValue() + chunk("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1"));
                problem(request.getKey(), sender.answer(), 415, "UNSUPPORTED_MEDIA_TYPE");
            }
        }
        assertThat(leases()).isZero();
    }

    @Test
    void aChunkedBodyOverTheLimitIsRefused413WhileItIsReadAndChangesNothing() throws Exception {
        try (Sender sender = new Sender()) {
            StringBuilder request = new StringBuilder(chunkedHead("POST", "/v1/leases", writer("alice"),
                    "application/json")).append(chunk(ACQUIRE_START));
            for (int sent = ACQUIRE_START.length(); sent <= BodyLimit.MAX_BODY_BYTES; sent += 8192) {
                request.append(chunk("j".repeat(8192)));
            }
            sender.send(request.toString()); // over the limit, and no end: refused as it is read
            Answer answer = sender.answer();
            assertThat(problem("chunked over the limit", answer, 413, "REQUEST_TOO_LARGE").get("detail").asString())
                    .isEqualTo("The request body must be at most 65536 bytes.");
            assertThat(answer.header("connection")).isEqualTo("close");
        }
        assertThat(leases()).isZero();
    }

    @Test
    void aDeclaredLengthOverTheLimitIsAnswered413BeforeAByteOfTheBodyIsSent() throws Exception {
        try (Sender sender = new Sender()) {
            sender.send("POST /v1/leases HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + writer("alice")
                    + "\r\nContent-Type: application/json\r\nContent-Length: " + (BodyLimit.MAX_BODY_BYTES + 1)
                    + "\r\n\r\n");
            problem("declared over the limit", sender.answer(), 413, "REQUEST_TOO_LARGE");
        }
        assertThat(leases()).isZero();
    }

    /**
     * A valid sender whose bytes keep the service waiting 0.6 of the body timeout each: the first is taken, the second
     * is refused 408, a problem, and the connection closed at once, never read further nor answered 5xx.
     */
    @Test
    void aBodyThatKeepsTheServiceWaitingPastTheBodyTimeoutIsRefused408AndItsConnectionClosed() throws Exception {
        Duration perByte = properties.requests().bodyTimeout().multipliedBy(3).dividedBy(5);
        try (Sender sender = new Sender()) {
            sender.send(chunkedHead("POST", "/v1/leases", writer("alice"), "application/json"));
            ticker.awaitWaitForBody();
            ticker.advance(perByte);
            sender.send(chunk("{"));
            ticker.awaitWaitForBody();
            ticker.advance(perByte);
            sender.sendIfOpen(chunk("\""));

            Answer answer = sender.answer();
            assertThat(problem("too slow", answer, 408, "REQUEST_REJECTED").get("detail").asString())
                    .startsWith("The request body did not arrive within");
            assertThat(answer.header("connection")).isEqualTo("close");
            assertThat(sender.closedByService()).isTrue();
            assertThat(ticker.readingsSinceTheWait()).as("the waiting read ended, and no other started").isOne();
        }
        assertThat(leases()).isZero();
    }

    /** The answer is a problem of this status and code, whole (its JSON parses). */
    private static JsonNode problem(String what, Answer answer, int status, String code) {
        assertThat(answer.status()).as(what + ": " + answer.body()).isEqualTo(status);
        assertThat(answer.header("content-type")).as(what).startsWith("application/problem+json");
        JsonNode problem = answer.json();
        assertThat(problem.get("code").asString()).as(what).isEqualTo(code);
        return problem;
    }

    private long leases() {
        return jdbc.sql("SELECT count(*) FROM lease WHERE tenant = :t").param("t", tenant).query(Long.class).single();
    }

    private static final String LAST_CHUNK = "0\r\n\r\n";

    private static String chunkedHead(String method, String path, String token, String contentType) {
        return method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + (token == null ? "" : "Authorization: Bearer " + token + "\r\n")
                + "Content-Type: " + contentType + "\r\nTransfer-Encoding: chunked\r\n\r\n";
    }

    private static String chunk(String ascii) {
        return Integer.toHexString(ascii.length()) + "\r\n" + ascii + "\r\n";
    }

    /**
     * The service's clock. Whoever reads a body (its stream, the drop after an answer) reads the clock once as each
     * read starts and once as it ends: an odd count of readings means a read is in progress.
     */
    static final class TestTicker implements Ticker {
        private final AtomicLong now = new AtomicLong();
        private final AtomicLong readings = new AtomicLong();
        private long seen;

        @Override
        public long read() {
            readings.incrementAndGet();
            return now.get();
        }

        void advance(Duration duration) {
            now.addAndGet(duration.toNanos());
        }

        /**
         * Until a read of a body has started since the last one awaited. The test has sent no byte it has not yet
         * been read, so the read waits for the sender: the time the test moves the clock now is time waited.
         */
        void awaitWaitForBody() {
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(5)).until(() -> {
                long count = readings.get();
                return count % 2 == 1 && count > seen;
            });
            seen = readings.get();
        }

        long readingsSinceTheWait() {
            return readings.get() - seen;
        }

        /** Until no read of a body is in progress (each read reads the clock as it ends, however it ends). */
        void awaitNoRead() {
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(5))
                    .until(() -> readings.get() % 2 == 0);
            seen = readings.get();
        }
    }

    /** One connection to the service, written to as the test says. */
    private final class Sender implements AutoCloseable {
        private final Socket socket;
        private final InputStream in;
        private final OutputStream out;

        Sender() throws IOException {
            socket = new Socket(InetAddress.getLoopbackAddress(), port);
            socket.setSoTimeout(30_000); // a guard against a hung test, not a measure
            in = new BufferedInputStream(socket.getInputStream());
            out = socket.getOutputStream();
        }

        void send(String ascii) throws IOException {
            out.write(ascii.getBytes(StandardCharsets.US_ASCII));
            out.flush();
        }

        /** Sends, unless the service has closed the connection already (it may once it has answered). */
        void sendIfOpen(String ascii) {
            try {
                send(ascii);
            } catch (IOException closed) {
                // The answer, read next, says why.
            }
        }

        Answer answer() throws IOException {
            String[] status = line().split(" ", 3);
            Map<String, String> headers = new HashMap<>();
            for (String header = line(); !header.isEmpty(); header = line()) {
                int colon = header.indexOf(':');
                headers.put(header.substring(0, colon).trim().toLowerCase(Locale.ROOT),
                        header.substring(colon + 1).trim());
            }
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            if (headers.containsKey("content-length")) {
                body.write(in.readNBytes(Integer.parseInt(headers.get("content-length"))));
            } else if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
                for (int size = Integer.parseInt(line(), 16); size > 0; size = Integer.parseInt(line(), 16)) {
                    body.write(in.readNBytes(size));
                    line();
                }
                line();
            }
            return new Answer(Integer.parseInt(status[1]), headers, body.toString(StandardCharsets.UTF_8));
        }

        /** True once the service has closed the connection: its end of the stream, or a reset. */
        boolean closedByService() throws IOException {
            try {
                while (in.read() >= 0) {
                    // Nothing more is expected; read to the end.
                }
                return true;
            } catch (SocketTimeoutException stillOpen) {
                return false;
            } catch (IOException reset) {
                return true;
            }
        }

        private String line() throws IOException {
            StringBuilder line = new StringBuilder();
            for (int c = in.read(); c != '\n'; c = in.read()) {
                if (c < 0) {
                    throw new IOException("the connection ended within a line: " + line);
                }
                if (c != '\r') {
                    line.append((char) c);
                }
            }
            return line.toString();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    private record Answer(int status, Map<String, String> headers, String body) {
        String header(String name) {
            return headers.get(name);
        }

        JsonNode json() {
            return JsonMapper.builder().build().readTree(body);
        }
    }
}
