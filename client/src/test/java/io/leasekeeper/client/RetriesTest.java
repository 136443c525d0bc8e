package io.leasekeeper.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The client's own behaviour on the wire, against a scripted HTTP server on loopback (the service's answers
 * are tested against the real service, in the service's build): retries of 503, of 429 TENANT_BUSY and of failed
 * connections keep one Idempotency-Key and wait at least Retry-After inside the caller's wait or local deadline,
 * a problem's fields reach its exception, and an unknown code is still a problem.
 */
class RetriesTest {

    private static final String LEASE = ScriptedServer.lease(30, 30_000);

    private ScriptedServer server;
    private final List<String> idempotencyKeys = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
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
    void aTenantBusyIsRetriedWithTheSameIdempotencyKeyUntilTheServiceAnswers() throws IOException {
        AtomicInteger calls = new AtomicInteger();
        serve(exchange -> {
            idempotencyKeys.add(exchange.getRequestHeaders().getFirst("Idempotency-Key"));
            if (calls.incrementAndGet() < 3) {
                ScriptedServer.tenantBusy(exchange, 0);
            } else {
                answer(exchange, 201, "application/json", LEASE);
            }
        });

        Lease lease = client().acquire(AcquireRequest.of(LeaseKey.of(Target.opaque("k"), "a"), "h", 30));

        assertThat(lease.fencingToken()).isEqualTo(7);
        assertThat(idempotencyKeys).hasSize(3).doesNotContainNull();
        assertThat(idempotencyKeys.stream().distinct()).hasSize(1);
    }

    @Test
    void aTenantBusyThatLastsIsThrownAsTenantBusyAfterTheAttempts() throws IOException {
        serve(exchange -> {
            idempotencyKeys.add(exchange.getRequestHeaders().getFirst("Idempotency-Key"));
            ScriptedServer.tenantBusy(exchange, 0);
        });

        assertThatThrownBy(() -> client().acquire(AcquireRequest.of(LeaseKey.of(Target.opaque("k"), "a"), "h", 30)))
                .isInstanceOf(ProblemException.TenantBusy.class)
                .satisfies(e -> {
                    ProblemException busy = (ProblemException) e;
                    assertThat(busy.status()).isEqualTo(429);
                    assertThat(busy.retryAfter()).contains(Duration.ZERO);
                });
        assertThat(idempotencyKeys).hasSize(3);
        assertThat(idempotencyKeys.stream().distinct()).hasSize(1);
    }

    @Test
    void aTenantBusysRetryAfterIsTheLeastPauseAndNoTryIsMadePastTheCallersWait() throws IOException {
        // A 1.9 s wait and Retry-After: 1 leave room for exactly one retry (the jitter alone, at most 5 ms, would
        // make hundreds): a second retry would have to come after the wait or before Retry-After.
        serve(exchange -> {
            idempotencyKeys.add(exchange.getRequestHeaders().getFirst("Idempotency-Key"));
            ScriptedServer.tenantBusy(exchange, 1);
        });

        assertThatThrownBy(() -> client().acquire(AcquireRequest.of(LeaseKey.of(Target.opaque("k"), "a"), "h", 30),
                Duration.ofMillis(1_900)))
                .isInstanceOf(ProblemException.TenantBusy.class);
        assertThat(idempotencyKeys).hasSize(2);
        assertThat(idempotencyKeys.stream().distinct()).hasSize(1);
    }

    @Test
    void aHeldLeasesRenewalAnsweredTenantBusyIsRetriedWithItsKeyAndTheLeaseKept() throws Exception {
        List<String> renewKeys = new CopyOnWriteArrayList<>();
        serve(exchange -> {
            String path = exchange.getRequestURI().getPath();
            if (path.endsWith("/renew")) {
                renewKeys.add(exchange.getRequestHeaders().getFirst("Idempotency-Key"));
                if (renewKeys.size() <= 2) {
                    ScriptedServer.tenantBusy(exchange, 0);
                    return;
                }
            }
            answer(exchange, ScriptedServer.isAcquire(exchange) ? 201 : 200, "application/json",
                    ScriptedServer.lease(30, 30_000));
        });
        CountDownLatch renewed = new CountDownLatch(1);
        AtomicInteger failures = new AtomicInteger();
        LeasekeeperClient client = LeasekeeperClient.builder(server.uri()).listener(new LeaseListener() {
            @Override
            public void renewed(HeldLease lease) {
                renewed.countDown();
            }

            @Override
            public void renewFailed(HeldLease lease, RuntimeException failure) {
                failures.incrementAndGet();
            }
        }).build();

        // Renewed every 2% of 30 s: the first renew 0.6 s in, its retries within 1 s, the local deadline 29 s in.
        try (HeldLease lease = client.hold(AcquireRequest.of(LeaseKey.of(Target.opaque("k"), "a"), "h", 30),
                new HoldOptions(0.02, Duration.ofSeconds(1), false))) {
            assertThat(renewed.await(20, TimeUnit.SECONDS)).isTrue();

            assertThat(failures).hasValue(2);
            assertThat(renewKeys.subList(0, 3).stream().distinct()).hasSize(1);
            assertThatCode(lease::checkValid).doesNotThrowAnyException();
        }
    }

    @Test
    void aHeldLeasesRenewalWaitsRetryAfterAndSendsNoRenewThatCouldNotArriveBeforeTheLocalDeadline() throws Exception {
        AtomicInteger renews = new AtomicInteger();
        serve(exchange -> {
            if (exchange.getRequestURI().getPath().endsWith("/renew")) {
                renews.incrementAndGet();
                ScriptedServer.tenantBusy(exchange, 1);
            } else {
                answer(exchange, 201, "application/json", ScriptedServer.lease(3, 3_000));
            }
        });
        CompletableFuture<HeldLease.Loss> lost = new CompletableFuture<>();
        LeasekeeperClient client = LeasekeeperClient.builder(server.uri()).listener(new LeaseListener() {
            @Override
            public void lost(HeldLease lease, HeldLease.Loss loss) {
                lost.complete(loss);
            }
        }).build();

        // TTL 3 s, margin 1 s: the local deadline 2 s in. The first renew 0.15 s in; Retry-After: 1 leaves room for
        // one retry, about 1.15 s in; the next could come no sooner than 2.15 s. Without Retry-After, the backoff
        // (at most 0.2 s, 0.4 s, 0.8 s) would send four renews or more.
        try (HeldLease lease = client.hold(AcquireRequest.of(LeaseKey.of(Target.opaque("k"), "a"), "h", 3),
                new HoldOptions(0.05, Duration.ofSeconds(1), false))) {
            assertThat(lost.get(20, TimeUnit.SECONDS)).isEqualTo(HeldLease.Loss.LOCAL_DEADLINE);
            assertThat(renews).hasValue(2);
        }
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

    private void serve(ScriptedServer.Handler handler) throws IOException {
        server = new ScriptedServer(handler);
    }

    private LeasekeeperClient client() {
        return LeasekeeperClient.builder(server.uri()).token("t")
                .retries(3, Duration.ofMillis(1), Duration.ofMillis(5)).build();
    }

    private static void answer(HttpExchange exchange, int status, String type, String body) throws IOException {
        ScriptedServer.answer(exchange, status, type, body);
    }
}
