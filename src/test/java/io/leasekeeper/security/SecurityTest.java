package io.leasekeeper.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jwt.SignedJWT;
import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.TestTokens;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.security.web.FilterChainProxy;
import org.springframework.security.web.firewall.HttpFirewall;
import org.springframework.test.util.ReflectionTestUtils;
import tools.jackson.databind.JsonNode;

/** Tokens, scopes, tenants and owners, over HTTP with real signed JWTs. */
class SecurityTest extends IntegrationTest {

    @Autowired
    FilterChainProxy securityFilters;

    @Autowired
    HttpFirewall firewall;

    /**
     * The firewall whose rules FirewallRulesTest checks is the one every request goes through. (The bean is
     * Spring Security's composite proxy; the chain it delegates to holds the firewall.)
     */
    @Test
    void requestsGoThroughTheServicesFirewall() {
        Object chain = ReflectionTestUtils.getField(securityFilters, "springSecurityFilterChain");
        assertThat(ReflectionTestUtils.getField(chain, "firewall")).isSameAs(firewall);
    }


    String leaseId;
    long fencingToken;

    @BeforeEach
    void aLease() {
        JsonNode lease = acquire(writer("alice"), "guarded", "job", "h", 30).body();
        leaseId = lease.get("leaseId").asString();
        fencingToken = lease.get("fencingToken").asLong();
    }

    @Test
    void missingOrInvalidTokensAnswer401Problems() {
        String otherTenant = "x-" + UUID.randomUUID().toString().substring(0, 8);
        Map<String, String> tokens = new java.util.LinkedHashMap<>();
        tokens.put("expired", TestTokens.expired("alice", tenant, TestTokens.WRITE));
        tokens.put("wrong signature", TestTokens.signedByUnknownKey("alice", tenant, TestTokens.WRITE));
        tokens.put("no tenant claim", TestTokens.withoutTenant("alice", TestTokens.WRITE));
        tokens.put("invalid tenant claim", TestTokens.token("alice", "bad tenant/", TestTokens.WRITE));
        tokens.put("garbage", "not-a-jwt");
        tokens.forEach(this::assertUnauthenticated);
        Api.Response none = api.get("/v1/leases", null);
        assertThat(none.status()).isEqualTo(401);
        assertThat(none.code()).isEqualTo("UNAUTHENTICATED");
        assertThat(none.body().get("traceId").asString()).hasSize(32);
        assertThat(api.post("/v1/leases", null, Api.acquireBody("x", "a", "h", 30)).status()).isEqualTo(401);
        assertThat(otherTenant).isNotEqualTo(tenant);
    }

    // Contract 1.1, "Tokens" (issue 17); this context checks tokens with a public key, an issuer and an audience.

    @Test
    void anAccessTokenTypedAsRfc9068SaysIsAcceptedAndAnyOtherTypeRefused() {
        for (String type : List.of("at+jwt", "application/at+jwt", "JWT")) {
            assertThat(api.get("/v1/leases", TestTokens.ofType(type, "alice", tenant, TestTokens.READ)).status())
                    .as(type).isEqualTo(200);
        }
        assertUnauthenticated("an ID token's type", TestTokens.ofType("id+jwt", "alice", tenant, TestTokens.READ));
        assertUnauthenticated("a logout token's type", TestTokens.ofType("logout+jwt", "alice", tenant, TestTokens.READ));
    }

    @Test
    void aTokenWithoutExpiryIsRefused() {
        assertUnauthenticated("no exp", TestTokens.with("alice", tenant, TestTokens.WRITE, c -> c.expirationTime(null)));
    }

    @Test
    void aTokenForAnotherAudienceIsRefusedAndOneNamingThisServiceAmongOthersAccepted() {
        assertUnauthenticated("aud of another API",
                TestTokens.with("alice", tenant, TestTokens.WRITE, c -> c.audience("https://billing.example.test")));
        assertUnauthenticated("no aud",
                TestTokens.with("alice", tenant, TestTokens.WRITE, c -> c.audience((String) null)));
        String both = TestTokens.with("alice", tenant, TestTokens.WRITE,
                c -> c.audience(List.of("https://billing.example.test", TestTokens.AUDIENCE)));
        assertThat(api.get("/v1/leases/" + leaseId, both).status()).isEqualTo(200);
    }

    @Test
    void aTokenOfAnotherIssuerIsRefusedWithAPublicKeyToo() {
        assertUnauthenticated("another iss",
                TestTokens.with("alice", tenant, TestTokens.WRITE, c -> c.issuer("https://elsewhere.example.test")));
        assertUnauthenticated("no iss", TestTokens.with("alice", tenant, TestTokens.WRITE, c -> c.issuer(null)));
    }

    @Test
    void anHs256TokenKeyedWithThePublicKeyIsRefused() {
        assertUnauthenticated("HS256 keyed with the public key",
                TestTokens.hs256KeyedWithThePublicKey("alice", tenant, TestTokens.WRITE));
    }

    private void assertUnauthenticated(String name, String token) {
        refusalDetail(name, token);
    }

    /**
     * The 401 problem's detail for a request with this token (null: none), checked to quote no part of the token:
     * neither its header, its claims nor its signature, as they are sent.
     */
    private String refusalDetail(String name, String token) {
        Api.Response r = api.get("/v1/leases/" + leaseId, token);
        assertThat(r.status()).as(name).isEqualTo(401);
        assertThat(r.code()).as(name).isEqualTo("UNAUTHENTICATED");
        assertThat(r.header("WWW-Authenticate")).as(name).startsWith("Bearer");
        assertThat(r.header("Content-Type")).as(name).startsWith("application/problem+json");
        String detail = r.body().get("detail").asString();
        if (token != null) {
            for (String part : token.split("\\.")) {
                if (part.length() >= 8) {
                    assertThat(r.raw()).as(name).doesNotContain(part.substring(0, 8));
                }
            }
        }
        return detail;
    }

    // Contract 1.2, "Keys that cannot deceive": a 401 says why, one reason each (issue 34).

    @Test
    void aRequestWithoutABearerTokenIsToldToSendOne() {
        assertThat(refusalDetail("no Authorization header", null)).isEqualTo(TokenRefusals.MISSING);
        Api.Response basic = api.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/leases"))
                .header("Authorization", "Basic YWxpY2U6c2VjcmV0").GET(), null);
        assertThat(basic.status()).isEqualTo(401);
        assertThat(basic.body().get("detail").asString()).isEqualTo(TokenRefusals.MISSING);
    }

    @Test
    void aBearerTokenThatIsNoJwtIsToldItIsMalformed() {
        for (String token : List.of("not-a-jwt", "aGVsbG8.d29ybGQ.c2lnbmF0dXJl", "x.y")) {
            assertThat(refusalDetail(token, token)).as(token).isEqualTo(TokenRefusals.MALFORMED);
        }
    }

    @Test
    void anUnsignedTokenIsToldThatOnlySignedOnesAreAccepted() {
        Base64.Encoder base64 = Base64.getUrlEncoder().withoutPadding();
        String unsigned = base64.encodeToString("{\"alg\":\"none\"}".getBytes(StandardCharsets.UTF_8)) + "."
                + base64.encodeToString(("{\"sub\":\"alice\",\"tenant\":\"" + tenant + "\",\"scope\":\"leases:write\"}")
                .getBytes(StandardCharsets.UTF_8)) + ".";
        assertThat(refusalDetail("alg none", unsigned)).isEqualTo(TokenRefusals.UNSIGNED);
    }

    @Test
    void anAuthorizationHeaderThatHoldsNoBearerTokenIsToldHowToWriteOne() {
        Api.Response r = api.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/leases"))
                .header("Authorization", "Bearer secret-with-a-space inside").GET(), null);
        assertThat(r.status()).isEqualTo(401);
        assertThat(r.code()).isEqualTo("UNAUTHENTICATED");
        assertThat(r.body().get("detail").asString()).isEqualTo(TokenRefusals.MALFORMED_HEADER);
        assertThat(r.raw()).doesNotContain("secret-with");
    }

    @Test
    void anExpiredTokenIsToldWhenItExpired() throws Exception {
        String token = TestTokens.expired("alice", tenant, TestTokens.WRITE);
        Instant expiry = SignedJWT.parse(token).getJWTClaimsSet().getExpirationTime().toInstant();
        assertThat(refusalDetail("expired", token)).isEqualTo("The token expired at " + expiry + " (exp).");
    }

    @Test
    void aTokenNotYetValidIsToldFromWhen() throws Exception {
        String token = TestTokens.with("alice", tenant, TestTokens.WRITE,
                c -> c.notBeforeTime(new Date(System.currentTimeMillis() + 3_600_000)));
        Instant notBefore = SignedJWT.parse(token).getJWTClaimsSet().getNotBeforeTime().toInstant();
        assertThat(refusalDetail("nbf in an hour", token)).isEqualTo("The token is not valid before " + notBefore + " (nbf).");
    }

    @Test
    void aTokenWithoutExpiryIsToldSo() {
        assertThat(refusalDetail("no exp", TestTokens.with("alice", tenant, TestTokens.WRITE, c -> c.expirationTime(null))))
                .isEqualTo("The token has no expiry (exp).");
    }

    @Test
    void aTokenOfAnotherIssuerIsToldTheIssuerThisServiceTrusts() {
        String expected = "The token was not issued by " + TestTokens.ISSUER + ", the issuer this service trusts (iss).";
        assertThat(refusalDetail("another iss", TestTokens.with("alice", tenant, TestTokens.WRITE,
                c -> c.issuer("https://elsewhere.example.test")))).isEqualTo(expected);
        assertThat(refusalDetail("no iss", TestTokens.with("alice", tenant, TestTokens.WRITE, c -> c.issuer(null))))
                .isEqualTo(expected);
    }

    @Test
    void aTokenForAnotherAudienceIsToldTheAudiencesThisServiceAccepts() {
        String expected = "The token is not meant for this service: its audience (aud) names none of "
                + TestTokens.AUDIENCE + ".";
        assertThat(refusalDetail("aud of another API", TestTokens.with("alice", tenant, TestTokens.WRITE,
                c -> c.audience("https://billing.example.test")))).isEqualTo(expected);
        assertThat(refusalDetail("no aud", TestTokens.with("alice", tenant, TestTokens.WRITE,
                c -> c.audience((String) null)))).isEqualTo(expected);
    }

    @Test
    void aTokenWithoutAValidTenantIsToldWhichClaimAndItsRule() {
        String expected = "The token has no valid 'tenant' claim (the tenant: 1..63 characters of A-Z a-z 0-9 . _ -,"
                + " starting with a letter or digit).";
        assertThat(refusalDetail("no tenant", TestTokens.withoutTenant("alice", TestTokens.WRITE))).isEqualTo(expected);
        assertThat(refusalDetail("bad tenant", TestTokens.token("alice", "bad tenant/", TestTokens.WRITE)))
                .isEqualTo(expected);
    }

    @Test
    void aTokenWithoutASubjectIsToldSo() {
        assertThat(refusalDetail("no sub", TestTokens.with(null, tenant, TestTokens.WRITE, c -> c)))
                .startsWith("The token has no valid subject (sub)");
    }

    @Test
    void aTokenNoTrustedKeyVerifiesIsToldItsSignatureDoesNotVerify() {
        assertThat(refusalDetail("unknown key", TestTokens.signedByUnknownKey("alice", tenant, TestTokens.WRITE)))
                .isEqualTo(TokenRefusals.NOT_VERIFIED);
        assertThat(refusalDetail("HS256 keyed with the public key",
                TestTokens.hs256KeyedWithThePublicKey("alice", tenant, TestTokens.WRITE))).isEqualTo(TokenRefusals.NOT_VERIFIED);
    }

    @Test
    void aTokenOfAnotherTypeIsToldTheTypesThisServiceAccepts() {
        assertThat(refusalDetail("id+jwt", TestTokens.ofType("id+jwt", "alice", tenant, TestTokens.READ)))
                .isEqualTo("The token's type (its typ header) is not one this service accepts: JWT, at+jwt or"
                        + " application/at+jwt, or none.");
    }

    @Test
    void everyReasonATokenBrokeIsSaid() {
        String token = TestTokens.with("alice", tenant, TestTokens.WRITE,
                c -> c.issuer("https://elsewhere.example.test").audience("https://billing.example.test"));
        assertThat(refusalDetail("issuer and audience", token))
                .contains("(iss)").contains("(aud)");
    }

    @Test
    void readScopeReadsButCannotWriteAndOnlyAdminRevokes() {
        String read = reader("reader");
        assertThat(api.get("/v1/leases/" + leaseId, read).status()).isEqualTo(200);
        assertThat(api.get("/v1/leases", read).status()).isEqualTo(200);
        assertThat(api.get("/v1/leases/" + leaseId + "/events", read).status()).isEqualTo(200);
        for (Api.Response denied : List.of(
                acquire(read, "other", "job", "h", 30),
                renew(read, leaseId, fencingToken),
                release(read, leaseId, fencingToken),
                revoke(read, leaseId, "no"),
                revoke(writer("alice"), leaseId, "no"))) {
            assertThat(denied.status()).isEqualTo(403);
            assertThat(denied.code()).isEqualTo("INSUFFICIENT_SCOPE");
        }
        assertThat(api.get("/v1/leases/" + leaseId, writer("w")).status()).isEqualTo(200);
        assertThat(api.get("/v1/leases/" + leaseId, admin("a")).status()).isEqualTo(200);
        assertThat(acquire(admin("a"), "admin-cannot-acquire", "job", "h", 30).code()).isEqualTo("INSUFFICIENT_SCOPE");
        assertThat(api.get("/v1/leases", TestTokens.token("nobody", tenant, List.of())).code())
                .isEqualTo("INSUFFICIENT_SCOPE");
        assertThat(revoke(admin("a"), leaseId, "ok").status()).isEqualTo(200);
    }

    @Test
    void onlyTheOwnerRenewsOrReleases() {
        String mallory = writer("mallory");
        Api.Response renew = renew(mallory, leaseId, fencingToken);
        assertThat(renew.status()).isEqualTo(403);
        assertThat(renew.code()).isEqualTo("NOT_LEASE_OWNER");
        Api.Response release = release(mallory, leaseId, fencingToken);
        assertThat(release.status()).isEqualTo(403);
        assertThat(release.code()).isEqualTo("NOT_LEASE_OWNER");
        assertThat(api.get("/v1/leases/" + leaseId, mallory).body().get("state").asString()).isEqualTo("active");
        assertThat(eventTypes(leaseId)).containsExactly("ACQUIRED");
    }

    @Test
    void anotherTenantsLeaseIsNotFoundOnEveryEndpoint() {
        String other = "o-" + UUID.randomUUID().toString().substring(0, 8);
        String w = TestTokens.token("alice", other, TestTokens.WRITE);
        String a = TestTokens.token("root", other, TestTokens.ADMIN);
        for (Api.Response r : List.of(
                api.get("/v1/leases/" + leaseId, w),
                api.get("/v1/leases/" + leaseId + "/events", w),
                renew(w, leaseId, fencingToken),
                release(w, leaseId, fencingToken),
                revoke(a, leaseId, "cross-tenant"))) {
            assertThat(r.status()).isEqualTo(404);
            assertThat(r.code()).isEqualTo("LEASE_NOT_FOUND");
        }
        assertThat(api.get("/v1/leases/current?targetType=opaque&target=guarded&actor=job", w).code())
                .isEqualTo("NO_ACTIVE_LEASE");
        assertThat(api.get("/v1/leases?state=any", w).body().get("items").size()).isZero();
        // The same key in another tenant is another key.
        assertThat(acquire(w, "guarded", "job", "h", 30).status()).isEqualTo(201);
        assertThat(api.get("/v1/leases/" + leaseId, writer("alice")).body().get("state").asString()).isEqualTo("active");
    }

    @Test
    void healthIsOpenAndOtherActuatorEndpointsAreNot() {
        Api management = new Api(managementPort);
        Api.Response health = management.get("/actuator/health", null);
        assertThat(health.status()).isEqualTo(200);
        assertThat(health.body().get("status").asString()).isEqualTo("UP");
        assertThat(management.get("/actuator/health/liveness", null).status()).isEqualTo(200);
        assertThat(management.get("/actuator/health/readiness", null).status()).isEqualTo(200);
        assertThat(management.get("/actuator/env", admin("root")).status()).isIn(403, 404);
        assertThat(management.get("/actuator/env", null).status()).isIn(401, 403, 404);
        // The API's port serves no actuator endpoint at all.
        assertThat(api.get("/actuator/health", null).status()).isIn(401, 404);
        assertThat(api.get("/actuator/prometheus", null).status()).isIn(401, 404);
        assertThat(api.get("/local/token", null).status()).isIn(401, 404);
    }

    @Test
    void aCallersTraceparentBecomesTheTraceIdOfProblemsAndEvents() {
        String traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
        Api.Response r = api.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/leases/" + leaseId + "/renew"))
                .header("Content-Type", "application/json")
                .header("traceparent", "00-" + traceId + "-00f067aa0ba902b7-01")
                .header("X-Request-Id", "req-123")
                .POST(HttpRequest.BodyPublishers.ofString("{\"fencingToken\": " + fencingToken + "}")), writer("alice"));
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.header("X-Trace-Id")).isEqualTo(traceId);
        JsonNode renewed = api.get("/v1/leases/" + leaseId + "/events", writer("alice")).body().get("items").get(1);
        assertThat(renewed.get("traceId").asString()).isEqualTo(traceId);
        assertThat(renewed.get("requestId").asString()).isEqualTo("req-123");

        Api.Response invalidVersion = api.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/leases"))
                .header("traceparent", "ff-" + traceId + "-00f067aa0ba902b7-01").GET(), writer("alice"));
        assertThat(invalidVersion.header("X-Trace-Id")).hasSize(32).isNotEqualTo(traceId);
    }

    @Test
    void aMalformedTraceparentStartsANewTraceAndIsNeverA5xx() {
        for (String malformed : List.of("00", "00-", "01-" + "4bf92f3577b34da6a3ce929d0e0e4736", "garbage")) {
            Api.Response r = api.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/leases"))
                    .header("traceparent", malformed).header("tracestate", "k=v").GET(), writer("alice"));
            assertThat(r.status()).as(malformed).isEqualTo(200);
            assertThat(r.header("X-Trace-Id")).as(malformed).hasSize(32);
        }
    }
}
