package io.leasekeeper.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.nimbusds.jwt.JWTClaimsSet;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.leasekeeper.LeasekeeperApplication;
import io.leasekeeper.support.Api;
import io.leasekeeper.support.TestDatabase;
import io.leasekeeper.support.TestTokens;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The token rules (contract 1.1, "Tokens") in the two decoder configurations that fetch keys, and what an
 * outage of the issuer's keys does (IssuerKeys): the whole service against an issuer served on loopback by the
 * JDK's HTTP server, OpenID discovery and the JWK set, whose fetches it counts and whose failures the test
 * decides. (SecurityTest holds the rules with a public key; IssuerKeysTest the fetching rules on a clock.)
 */
class TokenDecoderConfigurationsTest {

    private static final String PROPERTY = "--spring.security.oauth2.resourceserver.jwt.";

    private static HttpServer server;
    private static String issuer;
    private static final AtomicInteger jwksFetches = new AtomicInteger();
    /** What the JWK set endpoint answers: its status (200 with the set, else an empty body). */
    private static volatile int jwksStatus;
    /** When set, the JWK set endpoint counts it down on entering, then waits for the test to release it. */
    private static volatile CountDownLatch jwksEntered;
    private static volatile CountDownLatch jwksReleased;

    private final String tenant = "t-" + UUID.randomUUID().toString().substring(0, 8);

    @BeforeAll
    static void anIssuerOnLoopback() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        issuer = "http://127.0.0.1:" + server.getAddress().getPort();
        server.createContext("/.well-known/openid-configuration", exchange -> answer(exchange,
                "{\"issuer\": \"" + issuer + "\", \"jwks_uri\": \"" + issuer + "/jwks\"}"));
        server.createContext("/jwks", exchange -> {
            jwksFetches.incrementAndGet();
            CountDownLatch entered = jwksEntered;
            if (entered != null) {
                entered.countDown();
                awaitQuietly(jwksReleased);
            }
            if (jwksStatus != 200) {
                exchange.sendResponseHeaders(jwksStatus, -1);
                exchange.close();
                return;
            }
            answer(exchange, TestTokens.jwkSet());
        });
        server.start();
    }

    @AfterAll
    static void stop() {
        server.stop(0);
    }

    @BeforeEach
    void anIssuerAnswering() {
        jwksFetches.set(0);
        jwksStatus = 200;
        jwksEntered = null;
        jwksReleased = new CountDownLatch(1);
    }

    @Test
    void withAJwkSetUriEveryTokenRuleHoldsAndUnknownKeyIdsRefetchTheSetAtMostOnce() {
        try (ConfigurableApplicationContext service = start(PROPERTY + "jwk-set-uri=" + issuer + "/jwks",
                PROPERTY + "issuer-uri=" + issuer, PROPERTY + "audiences=" + TestTokens.AUDIENCE)) {
            assertTheTokenRules(api(service));
        }
    }

    @Test
    void withAnIssuerUriEveryTokenRuleHoldsAndUnknownKeyIdsRefetchTheSetAtMostOnce() {
        try (ConfigurableApplicationContext service = start(PROPERTY + "issuer-uri=" + issuer,
                PROPERTY + "audiences=" + TestTokens.AUDIENCE)) {
            assertTheTokenRules(api(service));
        }
    }

    @Test
    void anAudienceCheckSwitchedOffWhileAudiencesAreSetRefusesToStart() {
        assertThatThrownBy(() -> start(PROPERTY + "issuer-uri=" + issuer, PROPERTY + "audiences=" + TestTokens.AUDIENCE,
                "--leasekeeper.security.audience-check=false").close())
                .rootCause()
                .hasMessageContaining("leasekeeper.security.audience-check is off, yet"
                        + " spring.security.oauth2.resourceserver.jwt.audiences is set");
    }

    private void assertTheTokenRules(Api api) {
        assertThat(api.get("/v1/leases", token(c -> c)).status()).as("a valid token").isEqualTo(200);
        assertThat(jwksFetches).hasValue(1);
        assertUnauthenticated(api, "no exp", token(c -> c.expirationTime(null)));
        assertUnauthenticated(api, "aud of another API", token(c -> c.audience("https://billing.example.test")));
        assertUnauthenticated(api, "another iss", token(c -> c.issuer("https://elsewhere.example.test")));
        assertUnauthenticated(api, "HS256 keyed with the public key",
                TestTokens.hs256KeyedWithThePublicKey("alice", tenant, TestTokens.READ));
        assertThat(jwksFetches).as("none of these named an unknown key").hasValue(1);

        List<Integer> statuses = new ArrayList<>();
        long start = System.nanoTime();
        for (int i = 0; i < 50; i++) {
            statuses.add(api.get("/v1/leases", madeUpKeyId("made-up-" + i)).status());
        }
        long intervals = (System.nanoTime() - start) / IssuerKeys.REFETCH_INTERVAL.toNanos();
        assertThat(statuses).containsOnly(401);
        assertThat(jwksFetches.get()).as("at most one refetch per %s, whatever key ids tokens name",
                IssuerKeys.REFETCH_INTERVAL).isBetween(1, 2 + (int) intervals);
        assertThat(api.get("/v1/leases", token(c -> c)).status()).isEqualTo(200);
    }

    @Test
    void whenTheIssuersKeysCannotBeFetchedAnyTokenIsAnswered503WithRetryAfterAndTheIssuerAskedOncePerWait() {
        jwksStatus = 503;
        try (ConfigurableApplicationContext service = start(PROPERTY + "jwk-set-uri=" + issuer + "/jwks",
                PROPERTY + "audiences=" + TestTokens.AUDIENCE)) {
            Api api = api(service);
            ListAppender<ILoggingEvent> logged = capturedLogs();
            long start = System.nanoTime();
            List<String> tokens = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                tokens.add(TestTokens.signedByUnknownKey("mallory", tenant, TestTokens.ADMIN));
            }
            tokens.add(token(c -> c));
            for (String token : tokens) {
                Api.Response r = api.get("/v1/leases", token);
                assertThat(r.status()).isEqualTo(503);
                assertThat(r.code()).isEqualTo("TOKEN_KEYS_UNAVAILABLE");
                assertThat(Integer.parseInt(r.header("Retry-After")))
                        .isBetween(1, (int) IssuerKeys.RETRY_AFTER.toSeconds());
            }
            long waits = (System.nanoTime() - start) / IssuerKeys.RETRY_AFTER.toNanos();
            assertThat(jwksFetches.get()).as("one fetch per %s", IssuerKeys.RETRY_AFTER).isBetween(1, 1 + (int) waits);
            assertThat(logged.list).as("nothing logged as an error, no stack trace")
                    .noneSatisfy(e -> assertThat(e.getLevel()).isEqualTo(Level.ERROR))
                    .allSatisfy(e -> assertThat(e.getThrowableProxy()).isNull())
                    .filteredOn(e -> e.getLoggerName().equals(IssuerKeys.class.getName()))
                    .hasSizeBetween(1, 2);

            jwksStatus = 200;
            Api.Response accepted = poll(() -> api.get("/v1/leases", token(c -> c)), r -> r.status() != 503);
            assertThat(accepted.status()).as("once the issuer answers again").isEqualTo(200);
        }
    }

    @Test
    void anUnknownKeyIdWhileTheIssuerHangsNeitherDropsTheKeysNorHoldsUpAValidToken() throws Exception {
        try (ConfigurableApplicationContext service = start(PROPERTY + "jwk-set-uri=" + issuer + "/jwks",
                PROPERTY + "audiences=" + TestTokens.AUDIENCE)) {
            Api api = api(service);
            assertThat(api.get("/v1/leases", token(c -> c)).status()).isEqualTo(200);
            long fetched = System.nanoTime();
            // A key id the set lacks refetches it only once the set is REFETCH_INTERVAL old.
            poll(System::nanoTime, now -> now - fetched > IssuerKeys.REFETCH_INTERVAL.toNanos());

            jwksEntered = new CountDownLatch(1);
            jwksStatus = 503;
            CompletableFuture<Api.Response> unknown = CompletableFuture.supplyAsync(
                    () -> api.get("/v1/leases", madeUpKeyId("rotated?")));
            assertThat(jwksEntered.await(30, TimeUnit.SECONDS)).as("its refetch reached the issuer").isTrue();
            Api.Response fresh = api.get("/v1/leases", token(c -> c.jwtID(UUID.randomUUID().toString())));
            assertThat(fresh.status()).as("a token not seen before, while the refetch hangs").isEqualTo(200);
            jwksReleased.countDown();

            assertThat(unknown.get(30, TimeUnit.SECONDS).status()).isEqualTo(401);
            assertThat(api.get("/v1/leases", token(c -> c.jwtID(UUID.randomUUID().toString()))).status())
                    .as("the refetch failed: the keys in hand stay").isEqualTo(200);
            assertThat(jwksFetches).hasValue(2);
        }
    }

    private String madeUpKeyId(String keyId) {
        return TestTokens.withKeyId(keyId, "mallory", tenant, TestTokens.READ, c -> c.issuer(issuer));
    }

    private static ListAppender<ILoggingEvent> capturedLogs() {
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        ((Logger) LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME)).addAppender(appender);
        return appender;
    }

    /** Asks until {@code done} holds, for at most 30 s: for rules where time itself matters. */
    private static <T> T poll(Supplier<T> ask, Predicate<T> done) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            T answer = ask.get();
            if (done.test(answer) || System.nanoTime() > deadline) {
                return answer;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private String token(UnaryOperator<JWTClaimsSet.Builder> edit) {
        return TestTokens.withKeyId(TestTokens.KEY_ID, "alice", tenant, TestTokens.READ, c -> edit.apply(c.issuer(issuer)));
    }

    private static void assertUnauthenticated(Api api, String name, String token) {
        Api.Response r = api.get("/v1/leases", token);
        assertThat(r.status()).as(name).isEqualTo(401);
        assertThat(r.code()).as(name).isEqualTo("UNAUTHENTICATED");
    }

    private static Api api(ConfigurableApplicationContext service) {
        return new Api(((WebServerApplicationContext) service).getWebServer().getPort());
    }

    private static ConfigurableApplicationContext start(String... tokenSettings) {
        TestDatabase.Connection db = TestDatabase.connection();
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--leasekeeper.sweeper.enabled=false",
                "--leasekeeper.idempotency.cleanup-enabled=false", "--leasekeeper.audit.cleanup-enabled=false",
                "--spring.datasource.url=" + db.url(), "--spring.datasource.username=" + db.username(),
                "--spring.datasource.password=" + db.password()));
        args.addAll(List.of(tokenSettings));
        return new SpringApplicationBuilder(LeasekeeperApplication.class).run(args.toArray(String[]::new));
    }

    private static void answer(HttpExchange exchange, String json) throws IOException {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, body.length);
        exchange.getResponseBody().write(body);
        exchange.close();
    }
}
