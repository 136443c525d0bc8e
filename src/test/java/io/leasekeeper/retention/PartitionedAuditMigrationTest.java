package io.leasekeeper.retention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.leasekeeper.support.TestDatabase;
import java.util.List;
import java.util.Map;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * Migration V7 on a database that has leases and events: every event moves into the partition of the leases
 * acquired before the migration, with its lease's acquisition time, its id and its order; new events continue the
 * ids; the per-lease unique indexes hold across the table.
 */
class PartitionedAuditMigrationTest {

    private static final String LEASES_AND_EVENTS = """
            WITH k AS (
                INSERT INTO lease_key (tenant, program, target_type, target_value, actor)
                VALUES ('t', 'default', 'opaque', 'migrated', 'job') RETURNING id
            ), l AS (
                INSERT INTO lease (id, key_id, tenant, owner, holder, fencing_token, state, acquired_at, expires_at,
                                   max_expires_at, ended_at, end_reason, ttl_seconds, max_lifetime_seconds)
                SELECT gen_random_uuid(), k.id, 't', 'alice', 'h', nextval('fencing_token_seq'), 'released',
                       lease_now() - interval '1 hour', lease_now(), lease_now(), lease_now(), 'released', 30, 86400
                FROM k RETURNING id, fencing_token, acquired_at
            )
            INSERT INTO lease_event (lease_id, type, from_state, to_state, fencing_token, at, principal)
            SELECT id, t.type, t.from_state, t.to_state, fencing_token, acquired_at + t.n * interval '1 s', 'alice'
            FROM l, (VALUES (0, 'ACQUIRED', NULL, 'active'), (1, 'RENEWED', 'active', 'active'),
                            (2, 'RELEASED', 'active', 'released')) AS t (n, type, from_state, to_state)
            """;

    @Test
    void theEventsOfV6MoveIntoOnePartitionWithTheirLeasesAcquisitionTimeAndKeepTheirIds() {
        TestDatabase.Connection db = TestDatabase.connection();
        String url = TestDatabase.newDatabase("v7");
        try {
            Flyway.configure().dataSource(url, db.username(), db.password()).locations("filesystem:db/migration")
                    .target("6").load().migrate();
            JdbcClient jdbc = JdbcClient.create(new DriverManagerDataSource(url, db.username(), db.password()));
            jdbc.sql(LEASES_AND_EVENTS).update();
            List<Map<String, Object>> before = jdbc.sql("SELECT id, lease_id, type, at FROM lease_event ORDER BY id")
                    .query().listOfRows();

            Flyway.configure().dataSource(url, db.username(), db.password()).locations("filesystem:db/migration")
                    .load().migrate();

            assertThat(jdbc.sql("SELECT id, lease_id, type, at FROM lease_event ORDER BY id").query().listOfRows())
                    .isEqualTo(before);
            assertThat(jdbc.sql("""
                    SELECT count(*) FROM lease_event_before_v7 e JOIN lease l ON l.id = e.lease_id
                    WHERE e.lease_acquired_at = l.acquired_at
                    """).query(Long.class).single()).isEqualTo(3);
            // A new event continues the ids; a second ACQUIRED of the lease is refused, as before V7.
            long next = jdbc.sql("""
                    INSERT INTO lease_event (tenant, lease_id, lease_acquired_at, type, to_state, fencing_token, at, principal)
                    SELECT tenant, id, acquired_at, 'RENEWED', 'active', fencing_token, lease_now(), 'alice' FROM lease
                    RETURNING id
                    """).query(Long.class).single();
            assertThat(next).isGreaterThan((Long) before.getLast().get("id"));
            assertThatThrownBy(() -> jdbc.sql("""
                    INSERT INTO lease_event (tenant, lease_id, lease_acquired_at, type, to_state, fencing_token, at, principal)
                    SELECT tenant, id, acquired_at, 'ACQUIRED', 'active', fencing_token, lease_now(), 'alice' FROM lease
                    """).update()).isInstanceOf(DataAccessException.class)
                    .hasMessageContaining("duplicate key");
        } finally {
            TestDatabase.dropDatabase(url);
        }
    }
}
