package io.leasekeeper.support;

import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The whole service on a random port against real PostgreSQL, with the scheduled sweeper off (tests
 * call it directly). Every test gets its own tenant, so tests never see each other's leases.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"leasekeeper.sweeper.enabled=false", "leasekeeper.idempotency.cleanup-enabled=false",
                "leasekeeper.audit.cleanup-enabled=false"})
public abstract class IntegrationTest {

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        TestDatabase.Connection db = TestDatabase.connection();
        registry.add("spring.datasource.url", db::url);
        registry.add("spring.datasource.username", db::username);
        registry.add("spring.datasource.password", db::password);
        registry.add("spring.datasource.hikari.maximum-pool-size", () -> 40);
        // Spring keeps every test context it made, each with its pool: idle connections are given back (after
        // 10 s, Hikari's least), so that the contexts of a whole run stay within the test cluster's
        // max_connections (200) instead of holding 40 connections each.
        registry.add("spring.datasource.hikari.minimum-idle", () -> 2);
        registry.add("spring.datasource.hikari.idle-timeout", () -> 10_000);
        registry.add("spring.security.oauth2.resourceserver.jwt.public-key-location", TestTokens::publicKeyLocation);
    }

    @LocalServerPort
    protected int port;

    /** Actuator's port (probes, Prometheus). */
    @LocalManagementPort
    protected int managementPort;

    @Autowired
    protected JdbcClient jdbc;

    protected Api api;
    protected String tenant;

    @BeforeEach
    void freshTenant() {
        api = new Api(port);
        tenant = "t-" + UUID.randomUUID().toString().substring(0, 8);
    }

    protected String writer(String subject) {
        return TestTokens.token(subject, tenant, TestTokens.WRITE);
    }

    protected String reader(String subject) {
        return TestTokens.token(subject, tenant, TestTokens.READ);
    }

    protected String admin(String subject) {
        return TestTokens.token(subject, tenant, TestTokens.ADMIN);
    }

    protected Api.Response acquire(String token, String target, String actor, String holder, int ttlSeconds) {
        return api.post("/v1/leases", token, Api.acquireBody(target, actor, holder, ttlSeconds));
    }

    protected Api.Response renew(String token, String leaseId, long fencingToken) {
        return api.post("/v1/leases/" + leaseId + "/renew", token, Map.of("fencingToken", fencingToken));
    }

    protected Api.Response release(String token, String leaseId, long fencingToken) {
        return api.post("/v1/leases/" + leaseId + "/release", token, Map.of("fencingToken", fencingToken));
    }

    protected Api.Response revoke(String token, String leaseId, String reason) {
        return api.post("/v1/admin/leases/" + leaseId + "/revoke", token, Map.of("reason", reason));
    }

    /** Moves a lease's expiry into the past by the database's clock, instead of waiting for it. */
    protected void backdateExpiry(String leaseId) {
        int updated = jdbc.sql("""
                UPDATE lease SET expires_at = lease_now() - interval '1 second'
                WHERE id = CAST(:id AS uuid)
                """).param("id", leaseId).update();
        if (updated != 1) {
            throw new IllegalStateException("no lease " + leaseId);
        }
    }

    protected List<String> eventTypes(String leaseId) {
        return jdbc.sql("SELECT type FROM lease_event WHERE lease_id = CAST(:id AS uuid) ORDER BY id")
                .param("id", leaseId).query(String.class).list();
    }
}
