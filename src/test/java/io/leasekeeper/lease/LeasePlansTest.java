package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.TestDatabase;
import java.lang.reflect.Field;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

/**
 * A lease looked up by its id is found by the primary key (tenant, id), whatever the statistics said of its
 * tenant. The case that made this a test: a tenant with no leases when the table was last analyzed, then many.
 * With statistics on the tenant column, PostgreSQL estimates such a tenant's rows at almost none, and with the
 * tenant's value in the plan (a custom plan, as the driver's first executions of a statement on a connection get,
 * and as EXPLAIN with bound parameters shows) a tenant-led list index filtering on the id costs it the same as
 * the primary key: it reached the lease through lease_list_by_key and scanned all of the tenant's leases for the
 * one id, a cost that grows with the tenant. Migration V9 keeps no statistics on the tenant columns; with them
 * back, this test fails.
 */
class LeasePlansTest extends IntegrationTest {

    private static final int LEASES = 3000;

    @BeforeEach
    void aTenantThatGrewSinceTheLastAnalyze() {
        // No ANALYZE by autovacuum in between: the statistics stay those of a tenant without leases.
        jdbc.sql("ALTER TABLE lease SET (autovacuum_enabled = false)").update();
        jdbc.sql("ALTER TABLE lease_key SET (autovacuum_enabled = false)").update();
        jdbc.sql("ANALYZE lease").update();
        jdbc.sql("ANALYZE lease_key").update();
        jdbc.sql("""
                WITH k AS (
                    INSERT INTO lease_key (tenant, program, target_type, target_value, actor, operation)
                    SELECT :tenant, 'default', 'opaque', 'grown-' || n, 'grower', NULL FROM generate_series(1, :count) AS n
                    RETURNING id, tenant
                )
                INSERT INTO lease (id, key_id, tenant, owner, holder, fencing_token, state, acquired_at,
                                   expires_at, max_expires_at, ttl_seconds, max_lifetime_seconds)
                SELECT gen_random_uuid(), k.id, k.tenant, 'alice', 'h', nextval('fencing_token_seq'), 'active',
                       lease_now(), lease_now() + interval '1 hour', lease_now() + interval '1 day', 3600, 86400
                FROM k
                """).param("tenant", tenant).param("count", LEASES).update();
    }

    @AfterEach
    void autovacuumBack() {
        jdbc.sql("ALTER TABLE lease RESET (autovacuum_enabled)").update();
        jdbc.sql("ALTER TABLE lease_key RESET (autovacuum_enabled)").update();
    }

    @Test
    void everyLookupOfALeaseByIdUsesThePrimaryKey() throws Exception {
        UUID leaseId = jdbc.sql("SELECT id FROM lease WHERE tenant = :tenant LIMIT 1").param("tenant", tenant)
                .query(UUID.class).single();
        Map<String, Object> params = Map.ofEntries(
                Map.entry("leaseId", leaseId), Map.entry("tenant", tenant), Map.entry("principal", "alice"),
                Map.entry("requestId", "r"), Map.entry("traceId", "t"), Map.entry("fencingToken", 1L),
                Map.entry("ttl", 30), Map.entry("state", "released"), Map.entry("eventType", "RELEASED"),
                Map.entry("reason", "released"), Map.entry("details", "{}"), Map.entry("afterEventId", 0L),
                Map.entry("limit", 101));

        for (String statement : new String[] {"LOCK_KEY_OF_LEASE", "BY_ID", "RENEW", "END"}) {
            assertThat(plan(sql(LeaseStore.class, statement), params)).as(statement)
                    .contains("\"Index Name\": \"lease_pkey\"")
                    .doesNotContain("\"Index Name\": \"lease_list");
        }
        assertThat(plan(sql(io.leasekeeper.audit.AuditLog.class, "HISTORY_PAGE"), params)).as("HISTORY_PAGE")
                .contains("\"Index Name\": \"lease_pkey\"")
                .doesNotContain("\"Index Name\": \"lease_list");
    }

    /**
     * With few active leases in the table, the planner estimates a tenant's active leases at a row: any index of
     * the active leases then ties with the one the statement needs, and a partial index, smaller, wins. So the
     * key's active lease is looked for as the key's newest lease, and the updates of a lease check "ended_at IS
     * NULL"; with "state = 'active'" in either, these plans scan the tenant's active leases (lease_due,
     * lease_one_active_per_key). Its own database: the shared one has other tests' active leases.
     */
    @Test
    void withFewActiveLeasesTheStatementsOfTheCycleFindTheirRowsByTheirKeys() throws Exception {
        TestDatabase.Connection cluster = TestDatabase.connection();
        String url = TestDatabase.newDatabase("plans");
        SingleConnectionDataSource connection = new SingleConnectionDataSource(url, cluster.username(),
                cluster.password(), true);
        try {
            Flyway.configure().dataSource(url, cluster.username(), cluster.password())
                    .locations("filesystem:db/migration").load().migrate();
            JdbcClient db = JdbcClient.create(connection);
            db.sql("""
                    WITH k AS (
                        INSERT INTO lease_key (tenant, program, target_type, target_value, actor, operation)
                        SELECT 'bench', 'default', 'opaque', CAST(n AS text), 'bench', 'bench'
                        FROM generate_series(0, 9999) AS n RETURNING id
                    )
                    INSERT INTO lease (id, key_id, tenant, owner, holder, fencing_token, state, acquired_at, expires_at,
                                       max_expires_at, ended_at, end_reason, ttl_seconds, max_lifetime_seconds)
                    SELECT gen_random_uuid(), k.id, 'bench', 'alice', 'h', g * 100000 + k.id,
                           CASE WHEN g = 3 AND k.id % 1000 = 0 THEN 'active' ELSE 'released' END,
                           lease_now(), lease_now() + interval '1 minute', lease_now() + interval '1 day',
                           CASE WHEN g = 3 AND k.id % 1000 = 0 THEN NULL ELSE lease_now() END,
                           CASE WHEN g = 3 AND k.id % 1000 = 0 THEN NULL ELSE 'released' END, 60, 86400
                    FROM k, generate_series(1, 3) AS g
                    """).update();
            db.sql("ANALYZE").update();
            Map<String, Object> active = db.sql("""
                    SELECT l.id, l.key_id, k.target_value FROM lease l JOIN lease_key k ON k.id = l.key_id
                    WHERE l.state = 'active' LIMIT 1
                    """).query().singleRow();
            Map<String, Object> params = new java.util.HashMap<>(Map.ofEntries(
                    Map.entry("leaseId", active.get("id")), Map.entry("keyId", active.get("key_id")),
                    Map.entry("tenant", "bench"), Map.entry("program", "default"), Map.entry("targetType", "opaque"),
                    Map.entry("targetValue", active.get("target_value")), Map.entry("actor", "bench"),
                    Map.entry("principal", "alice"), Map.entry("holder", "h"), Map.entry("ttl", 60),
                    Map.entry("maxLifetime", 86400), Map.entry("lockDelay", 0), Map.entry("metadata", "{}"),
                    Map.entry("requestId", "r"), Map.entry("traceId", "t"), Map.entry("fencingToken", 1L),
                    Map.entry("state", "released"), Map.entry("eventType", "RELEASED"), Map.entry("reason", "released"),
                    Map.entry("details", "{}"), Map.entry("seconds", 10)));
            params.put("operation", "bench");
            params.put("jobId", null);
            params.put("leaseTraceId", null);

            for (String statement : new String[] {"ACQUIRE_IF_FREE", "RENEW", "END", "EXPIRE", "PEEK_KEY",
                    "CURRENT_OF_KEY"}) {
                assertThat(plan(db, sql(LeaseStore.class, statement), params)).as(statement)
                        .doesNotContain("\"Index Name\": \"lease_due\"")
                        .doesNotContain("\"Index Name\": \"lease_one_active_per_key\"")
                        .doesNotContain("\"Index Name\": \"lease_list_active\"");
            }
        } finally {
            connection.destroy();
            TestDatabase.dropDatabase(url);
        }
    }

    private String plan(String sql, Map<String, Object> params) {
        return plan(jdbc, sql, params);
    }

    private static String plan(JdbcClient db, String sql, Map<String, Object> params) {
        var statement = db.sql("EXPLAIN (FORMAT JSON) " + sql);
        for (var param : params.entrySet()) {
            if (sql.contains(":" + param.getKey())) {
                statement = statement.param(param.getKey(), param.getValue());
            }
        }
        return String.join("\n", statement.query(String.class).list());
    }

    private static String sql(Class<?> owner, String field) throws ReflectiveOperationException {
        Field f = owner.getDeclaredField(field);
        f.setAccessible(true);
        return (String) f.get(null);
    }
}
