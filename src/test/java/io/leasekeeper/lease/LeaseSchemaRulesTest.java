package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataIntegrityViolationException;

/**
 * The lease rules the schema itself keeps (db/migration/V1__schema.sql): every primary and foreign key leads with the
 * tenant, a lease's tenant is its key's tenant, and a terminal lease is final.
 */
class LeaseSchemaRulesTest extends IntegrationTest {

    /**
     * Every primary key and foreign key of the service's tables, with its columns in order; not Flyway's table, nor
     * lease_event_horizon, the one row that says how far the audit's partitions reach, which is the whole
     * database's and no tenant's (a reference table, when the schema is sharded by tenant).
     */
    private static final String KEYS = """
            SELECT c.conrelid::regclass::text AS relation, c.conname AS name,
                   (SELECT array_agg(a.attname::text ORDER BY k.n) FROM unnest(c.conkey) WITH ORDINALITY AS k (attnum, n)
                    JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum) AS columns,
                   (SELECT array_agg(a.attname::text ORDER BY k.n) FROM unnest(c.confkey) WITH ORDINALITY AS k (attnum, n)
                    JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum) AS referenced
            FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid JOIN pg_namespace s ON s.oid = r.relnamespace
            WHERE c.contype IN ('p', 'f') AND c.conparentid = 0 AND s.nspname = current_schema() AND NOT r.relispartition
              AND r.relname NOT IN ('flyway_schema_history', 'lease_event_horizon')
            """;

    @Test
    void everyPrimaryKeyAndForeignKeyLeadsWithTheTenant() {
        List<Map<String, Object>> keys = jdbc.sql(KEYS).query().listOfRows();
        assertThat(keys).extracting(k -> k.get("relation")).contains("lease_key", "lease", "lease_event",
                "lease_waiter", "idempotency_record");
        for (Map<String, Object> key : keys) {
            assertThat(firstOf(key.get("columns"))).as("%s", key).isEqualTo("tenant");
            if (key.get("referenced") != null) {
                assertThat(firstOf(key.get("referenced"))).as("%s", key).isEqualTo("tenant");
            }
        }
        assertThat(keys).filteredOn(k -> k.get("referenced") != null).extracting(k -> k.get("relation"))
                .containsExactlyInAnyOrder("lease", "lease_waiter");
    }

    @Test
    void aLeaseCannotNameAKeyOfAnotherTenant() {
        long key = jdbc.sql("""
                INSERT INTO lease_key (tenant, program, target_type, target_value, actor)
                VALUES (:tenant, 'default', 'opaque', 'mine', 'job') RETURNING id
                """).param("tenant", tenant).query(Long.class).single();
        assertThatThrownBy(() -> jdbc.sql("""
                INSERT INTO lease (id, key_id, tenant, owner, holder, fencing_token, state, acquired_at, expires_at,
                                   max_expires_at, ttl_seconds, max_lifetime_seconds)
                VALUES (gen_random_uuid(), :key, 'another-tenant', 'mallory', 'h', 1, 'active', lease_now(),
                        lease_now() + interval '1 minute', lease_now() + interval '1 day', 60, 86400)
                """).param("key", key).update())
                .isInstanceOf(DataIntegrityViolationException.class).hasMessageContaining("lease_key_of_its_tenant");
    }

    @Test
    void aTerminalLeaseIsFinal() {
        Api.Response lease = acquire(writer("alice"), "final", "job", "h", 60);
        String id = lease.body().get("leaseId").asString();
        assertThat(release(writer("alice"), id, lease.body().get("fencingToken").asLong()).status()).isEqualTo(200);

        for (String change : List.of("state = 'active', ended_at = NULL, end_reason = NULL",
                "expires_at = expires_at + interval '1 hour'", "holder = 'someone else'")) {
            assertThatThrownBy(() -> jdbc.sql("UPDATE lease SET " + change + " WHERE tenant = :tenant AND id = CAST(:id AS uuid)")
                    .param("tenant", tenant).param("id", id).update())
                    .as(change).isInstanceOf(DataAccessException.class)
                    .hasMessageContaining("a terminal lease is final");
        }
        assertThat(api.get("/v1/leases/" + id, reader("alice")).body().get("state").asString()).isEqualTo("released");
    }

    private static String firstOf(Object array) throws IllegalStateException {
        try {
            return ((String[]) ((java.sql.Array) array).getArray())[0];
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
