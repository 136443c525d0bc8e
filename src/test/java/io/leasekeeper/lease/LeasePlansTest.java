package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.AutoExplain;
import io.leasekeeper.support.TestDatabase;
import java.sql.SQLWarning;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

/**
 * The plans of the cycle's statements do not depend on the planner's estimate of a tenant's active leases. For a
 * tenant that grew since the last ANALYZE (here with autovacuum off, as in the minute before it runs), the planner
 * estimates its active leases at a row: any index of the active leases then ties with the one a statement needs,
 * and a partial index, smaller, wins. So the key's active lease is looked for as the key's newest lease, and the
 * updates of a lease check "ended_at IS NULL"; with "state = 'active'" in either, these plans scan the tenant's
 * active leases (lease_due, lease_one_active_per_key). On a database of its own. The transitions are called by their
 * functions' names (and an acquire's expiry by its primitive's, lease_expire_locked), and the plans of the statements
 * inside them read with auto_explain; the read of a key's lease is read from LeaseReads by its name.
 */
class LeasePlansTest {

    @Test
    void withFewActiveLeasesTheStatementsOfTheCycleFindTheirRowsByTheirKeys() {
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
                        INSERT INTO lease_key (tenant, program, target_type, target_value, actor)
                        SELECT 'other', 'default', 'opaque', CAST(n AS text), 'job' FROM generate_series(1, 1000) AS n
                        RETURNING id
                    )
                    INSERT INTO lease (id, key_id, tenant, owner, holder, fencing_token, state, acquired_at, expires_at,
                                       max_expires_at, ended_at, end_reason, ttl_seconds, max_lifetime_seconds)
                    SELECT gen_random_uuid(), k.id, 'other', 'o', 'h', k.id, 'released', lease_now(), lease_now(),
                           lease_now(), lease_now(), 'released', 60, 86400
                    FROM k
                    """).update();
            // The events of the calls below (rolled back): the service makes the partitions of lease_event as it starts.
            db.sql("CREATE TABLE lease_event_any_time PARTITION OF lease_event DEFAULT").update();
            db.sql("ANALYZE").update(); // the statistics know tenant "other" only
            db.sql("ALTER TABLE lease SET (autovacuum_enabled = false)").update();
            db.sql("ALTER TABLE lease_key SET (autovacuum_enabled = false)").update();
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
            Map<String, Object> active = db.sql("""
                    SELECT l.id, l.key_id, l.fencing_token, k.target_value FROM lease l JOIN lease_key k ON k.id = l.key_id
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

            Map<String, String> statements = Map.of("CURRENT_OF_KEY", LeaseReads.CURRENT_OF_KEY);
            statements.forEach((name, sql) -> assertThat(plan(db, sql, params)).as(name)
                    .doesNotContain("\"Index Name\": \"lease_due\"")
                    .doesNotContain("\"Index Name\": \"lease_one_active_per_key\"")
                    .doesNotContain("\"Index Name\": \"lease_list_active\""));

            String lease = "'" + active.get("id") + "'";
            String token = active.get("fencing_token").toString();
            String key = "'bench', 'default', 'opaque', '" + active.get("target_value") + "', 'bench', 'bench'";
            String request = "ROW('default', 'opaque', '" + active.get("target_value") + "', 'bench', 'bench', 'bob',"
                    + " 'h', 60, 86400, 0, NULL, NULL, '{}', 'r', 't', true, %s, '%s', 5, NULL, NULL)::lease_acquire_request";
            Map<String, String> calls = Map.of(
                    "lease_acquire", "SELECT (answer).outcome FROM lease_acquire('bench', "
                            + request.formatted("NULL", "once") + ", 5, NULL, 62)",
                    // a waiting acquire's first try: the key is held, and its look without the lock finds it watched
                    "lease_acquire (first try)", "SELECT (answer).outcome FROM lease_acquire('bench', "
                            + request.formatted("gen_random_uuid()", "first") + ", 5, NULL, 62)",
                    "lease_renew", "SELECT outcome FROM lease_renew('bench', ROW(" + lease + ", 'alice', " + token
                            + ", NULL, 'r', 't')::lease_renew_request)",
                    "lease_end", "SELECT (answer).outcome FROM lease_end('bench', ROW(" + lease + ", 'released', 'alice', "
                            + token + ", 'released', 'r', 't')::lease_end_request, 5, NULL)",
                    // an acquire's record of an expiry the sweeper has not made, one lease by its id
                    "lease_expire_locked", "SELECT lease_expire_locked('bench', ARRAY[" + lease + "::uuid],"
                            + " lease_now() + interval '2 minutes', 'system:acquire', 'r', 't', NULL)");
            calls.forEach((name, call) -> {
                List<String> plans = AutoExplain.nestedPlans(messages(connection, call), name.split(" ")[0]);
                assertThat(plans).as(name).hasSizeGreaterThanOrEqualTo(2).allSatisfy(plan -> assertThat(plan)
                        .doesNotContain("\"Index Name\": \"lease_due\"")
                        .doesNotContain("\"Index Name\": \"lease_one_active_per_key\"")
                        .doesNotContain("\"Index Name\": \"lease_list_active\""));
            });
        } finally {
            connection.destroy();
            TestDatabase.dropDatabase(url);
        }
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

    /** The messages of a call run with auto_explain's settings, rolled back with them. */
    private static List<String> messages(SingleConnectionDataSource connection, String call) {
        List<String> messages = new ArrayList<>();
        try (var statement = connection.getConnection().createStatement()) {
            statement.execute("BEGIN");
            statement.execute(AutoExplain.SESSION);
            statement.clearWarnings();
            statement.execute(call);
            for (SQLWarning w = statement.getWarnings(); w != null; w = w.getNextWarning()) {
                messages.add(w.getMessage());
            }
            statement.execute("ROLLBACK");
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
        return messages;
    }
}
