package io.leasekeeper.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The token rules (contract 1.1, "Tokens"; issue 17) in the two decoder configurations that fetch keys, the
 * whole service against an issuer served on loopback by the JDK's HTTP server: OpenID discovery and the JWK
 * set, whose fetches it counts. (SecurityTest holds the rules with a public key.)
 */
class TokenDecoderConfigurationsTest {

    private static final String PROPERTY = "--spring.security.oauth2.resourceserver.jwt.";

    private static HttpServer server;
    private static String issuer;
    private static final AtomicInteger jwksFetches = new AtomicInteger();

    private final String tenant = "t-" + UUID.randomUUID().toString().substring(0, 8);

    @BeforeAll
    static void anIssuerOnLoopback() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        issuer = "http://127.0.0.1:" + server.getAddress().getPort();
        server.createContext("/.well-known/openid-configuration", exchange -> answer(exchange,
                "{\"issuer\": \"" + issuer + "\", \"jwks_uri\": \"" + issuer + "/jwks\"}"));
        server.createContext("/jwks", exchange -> {
            jwksFetches.incrementAndGet();
            answer(exchange, TestTokens.jwkSet());
        });
        server.start();
    }

    @AfterAll
    static void stop() {
        server.stop(0);
    }

    @BeforeEach
    void noFetchesYet() {
        jwksFetches.set(0);
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
        for (int i = 0; i < 50; i++) {
            statuses.add(api.get("/v1/leases", TestTokens.withKeyId("made-up-" + i, "alice", tenant, TestTokens.READ,
                    c -> c.issuer(issuer))).status());
        }
        assertThat(statuses).containsOnly(401);
        assertThat(jwksFetches).as("one refetch, for the first unknown key id, within %s", JwkSetCache.REFETCH_INTERVAL)
                .hasValue(2);
        assertThat(api.get("/v1/leases", token(c -> c)).status()).isEqualTo(200);
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
