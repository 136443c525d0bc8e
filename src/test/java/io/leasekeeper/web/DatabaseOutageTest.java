package io.leasekeeper.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.CuttableProxy;
import io.leasekeeper.support.TestTokens;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * PostgreSQL goes away (a proxy between service and database is cut): requests fail fast with 503
 * DATABASE_UNAVAILABLE and Retry-After, readiness is DOWN while liveness stays UP, and once the
 * database is back the service answers again by itself.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "leasekeeper.sweeper.enabled=false", "leasekeeper.idempotency.cleanup-enabled=false",
        "leasekeeper.audit.cleanup-enabled=false"})
@DirtiesContext
class DatabaseOutageTest {

    private static CuttableProxy proxy;

    @DynamicPropertySource
    static void throughTheProxy(DynamicPropertyRegistry registry) {
        proxy = CuttableProxy.inFrontOfTheTestDatabase(registry);
        registry.add("spring.security.oauth2.resourceserver.jwt.public-key-location", TestTokens::publicKeyLocation);
    }

    @LocalServerPort
    int port;

    @LocalManagementPort
    int managementPort;

    @AfterEach
    void databaseBack() {
        proxy.restore();
    }

    @AfterAll
    static void closeProxy() throws Exception {
        proxy.close();
    }

    @Test
    void anOutageAnswers503WithRetryAfterReadinessDownLivenessUpAndTheServiceRecoversByItself() {
        Api api = new Api(port);
        Api management = new Api(managementPort);
        String tenant = "out-" + UUID.randomUUID().toString().substring(0, 8);
        String w = TestTokens.token("alice", tenant, TestTokens.WRITE);
        assertThat(api.post("/v1/leases", w, Api.acquireBody("before", "job", "h", 30)).status()).isEqualTo(201);
        assertThat(management.get("/actuator/health/readiness", null).status()).isEqualTo(200);

        proxy.cut();
        for (int i = 0; i < 3; i++) {
            Api.Response down = api.post("/v1/leases", w, Api.acquireBody("during-" + i, "job", "h", 30));
            assertThat(down.status()).isEqualTo(503);
            assertThat(down.code()).isEqualTo("DATABASE_UNAVAILABLE");
            assertThat(Integer.parseInt(down.header("Retry-After"))).isPositive();
            assertThat(down.raw()).doesNotContain("Exception").doesNotContain("jdbc");
        }
        assertThat(api.get("/v1/leases", w).code()).isEqualTo("DATABASE_UNAVAILABLE");
        Api.Response readiness = management.get("/actuator/health/readiness", null);
        assertThat(readiness.status()).isEqualTo(503);
        assertThat(readiness.body().get("status").asString()).isEqualTo("DOWN");
        Api.Response liveness = management.get("/actuator/health/liveness", null);
        assertThat(liveness.status()).isEqualTo(200);
        assertThat(liveness.body().get("status").asString()).isEqualTo("UP");

        proxy.restore();
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(200)).until(() ->
                api.post("/v1/leases", w, Api.acquireBody("after", "job", "h", 30)).status() == 201);
        assertThat(management.get("/actuator/health/readiness", null).status()).isEqualTo(200);
    }

    @Test
    void aSilentDatabaseAnswers503InsteadOfHangingAndTheServiceRecoversByItself() {
        Api api = new Api(port);   // its client gives up after 30 s: a hung request fails this test
        String tenant = "silent-" + UUID.randomUUID().toString().substring(0, 8);
        String w = TestTokens.token("alice", tenant, TestTokens.WRITE);
        assertThat(api.post("/v1/leases", w, Api.acquireBody("before", "job", "h", 30)).status()).isEqualTo(201);

        proxy.stall();
        // Whether the request's connection is checked (and dropped) by the pool or used at once, the
        // wait is bounded: by the pool's connection timeout, or by the driver's socket timeout.
        Api.Response stalled = api.post("/v1/leases", w, Api.acquireBody("during", "job", "h", 30));
        assertThat(stalled.status()).isEqualTo(503);
        assertThat(stalled.code()).isEqualTo("DATABASE_UNAVAILABLE");
        assertThat(stalled.header("Retry-After")).isNotBlank();

        proxy.restore();
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(200)).until(() ->
                api.post("/v1/leases", w, Api.acquireBody("after", "job", "h", 30)).status() == 201);
        // Nothing was half-written: the stalled acquire made no lease.
        assertThat(api.get("/v1/leases?targetType=opaque&target=during&state=any", w).body().get("items")).isEmpty();
    }
}
