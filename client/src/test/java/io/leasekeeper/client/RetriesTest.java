package io.leasekeeper.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The client's own behaviour on the wire, against a scripted HTTP server on loopback (the service's answers
 * are tested against the real service, in the service's build): retries of 503 and of failed connections
 * keep one Idempotency-Key, a problem's fields reach its exception, and an unknown code is still a problem.
 */
class RetriesTest {

    private static final String LEASE = """
            {"leaseId": "3f0c6f8e-0000-4000-8000-000000000001", "key": "t/default/opaque:k/a", "tenant": "t",
             "program": "default", "target": {"type": "opaque", "value": "k"}, "actor": "a", "operation": null,
             "owner": "o", "holder": "h", "fencingToken": 7, "state": "active",
             "acquiredAt": "2026-12-05T00:00:00.000Z", "renewedAt": null, "expiresAt": "2026-12-05T00:00:30.000Z",
             "maxExpiresAt": "2026-12-06T00:00:00.000Z", "endedAt": null, "endReason": null, "ttlSeconds": 30,
             "maxLifetimeSeconds": 86400, "lockDelaySeconds": 0, "remainingMs": 30000,
             "serverTime": "2026-12-05T00:00:00.000Z", "jobId": null, "traceId": null, "metadata": {"a": 1}}""";

    private HttpServer server;
    private final List<String> idempotencyKeys = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
    }

    @Test
    void a503IsRetriedWithTheSameIdempotencyKeyUntilTheServiceAnswers() throws IOException {
        AtomicInteger calls = new AtomicInteger();
        serve(exchange -> {
            idempotencyKeys.add(exchange.getRequestHeaders().getFirst("Idempotency-Key"));
            if (calls.incrementAndGet() < 3) {
                answer(exchange, 503, "application/problem+json",
                        "{\"status\": 503, \"code\": \"DATABASE_UNAVAILABLE\", \"title\": \"Database unavailable\"}");
            } else {
                answer(exchange, 201, "application/json", LEASE);
            }
        });

        Lease lease = client().acquire(AcquireRequest.of(LeaseKey.of(Target.opaque("k"), "a"), "h", 30));

        assertThat(lease.fencingToken()).isEqualTo(7);
        assertThat(lease.metadata()).containsEntry("a", 1);
        assertThat(idempotencyKeys).hasSize(3).doesNotContainNull();
        assertThat(idempotencyKeys.stream().distinct()).hasSize(1);
    }

    @Test
    void aCallersIdempotencyKeyIsSentAsGivenOnEveryAttemptOfAcquireRenewAndRelease() throws IOException {
        AtomicInteger calls = new AtomicInteger();
        serve(exchange -> {
            idempotencyKeys.add(exchange.getRequestHeaders().getFirst("Idempotency-Key"));
            if (calls.incrementAndGet() % 2 == 1) {
                answer(exchange, 503, "application/problem+json",
                        "{\"status\": 503, \"code\": \"DATABASE_UNAVAILABLE\", \"title\": \"Database unavailable\"}");
            } else {
                answer(exchange, exchange.getRequestURI().getPath().endsWith("/v1/leases") ? 201 : 200,
                        "application/json", LEASE);
            }
        });
        LeasekeeperClient client = client();

        Lease lease = client.acquire(AcquireRequest.of(LeaseKey.of(Target.opaque("k"), "a"), "h", 30), "job-7-acquire");
        client.renew(lease.leaseId(), lease.fencingToken(), null, "job-7-renew");
        client.release(lease.leaseId(), lease.fencingToken(), "job-7-release");

        assertThat(idempotencyKeys).containsExactly("job-7-acquire", "job-7-acquire", "job-7-renew", "job-7-renew",
                "job-7-release", "job-7-release");
    }

    @Test
    void a503ThatLastsIsThrownAfterTheAttempts() throws IOException {
        AtomicInteger calls = new AtomicInteger();
        serve(exchange -> {
            calls.incrementAndGet();
            exchange.getResponseHeaders().add("Retry-After", "0");
            answer(exchange, 503, "application/problem+json",
                    "{\"status\": 503, \"code\": \"DATABASE_UNAVAILABLE\", \"title\": \"Database unavailable\"}");
        });

        assertThatThrownBy(() -> client().inspect(UUID.randomUUID()))
                .isInstanceOf(ProblemException.DatabaseUnavailable.class)
                .satisfies(e -> assertThat(((ProblemException) e).retryAfter()).contains(Duration.ZERO));
        assertThat(calls).hasValue(3);
    }

    @Test
    void aServiceThatCannotBeReachedIsServiceUnavailableAfterTheAttempts() throws IOException {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        LeasekeeperClient unreachable = LeasekeeperClient.builder(URI.create("http://127.0.0.1:" + closedPort))
                .retries(2, Duration.ofMillis(1), Duration.ofMillis(5)).build();

        assertThatThrownBy(() -> unreachable.release(UUID.randomUUID(), 1))
                .isInstanceOf(ServiceUnavailableException.class).hasMessageContaining("after 2 attempts");
    }

    @Test
    void aProblemOfACodeThisVersionDoesNotKnowIsAProblemExceptionWithItsFields() throws IOException {
        serve(exchange -> answer(exchange, 429, "application/problem+json",
                "{\"status\": 429, \"code\": \"SOMETHING_NEW\", \"title\": \"New\", \"detail\": \"later\"}"));

        assertThatThrownBy(() -> client().inspect(UUID.randomUUID()))
                .isExactlyInstanceOf(ProblemException.class)
                .satisfies(e -> {
                    ProblemException problem = (ProblemException) e;
                    assertThat(problem.status()).isEqualTo(429);
                    assertThat(problem.code()).isEqualTo("SOMETHING_NEW");
                    assertThat(problem.problem().detail()).isEqualTo("later");
                });
    }

    @Test
    void everyCodeOfTheContractHasItsOwnExceptionType() {
        for (String code : ProblemException.knownCodes()) {
            ProblemException e = ProblemException.of(new Problem(400, code, null, null, null, null, null, null,
                    List.of(), ""));
            assertThat(e.getClass()).as(code).isNotEqualTo(ProblemException.class);
            assertThat(e.code()).isEqualTo(code);
        }
        assertThat(ProblemException.knownCodes().stream().map(code -> ProblemException.of(new Problem(400, code,
                null, null, null, null, null, null, List.of(), "")).getClass()).distinct())
                .hasSameSizeAs(ProblemException.knownCodes());
    }

    private interface Handler {
        void handle(HttpExchange exchange) throws IOException;
    }

    private void serve(Handler handler) throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            handler.handle(exchange);
        });
        server.start();
    }

    private LeasekeeperClient client() {
        return LeasekeeperClient.builder(URI.create("http://127.0.0.1:" + server.getAddress().getPort()))
                .token("t").retries(3, Duration.ofMillis(1), Duration.ofMillis(5)).build();
    }

    private static void answer(HttpExchange exchange, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", type);
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
        exchange.close();
    }
}
