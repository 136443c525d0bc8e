package io.leasekeeper.bench;

import java.net.URI;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

/** The benchmark's own SQL: emptying the tables between workloads and seeding leases in bulk. */
final class Database {

    /** Active leases on keys of their own, each with its ACQUIRED event, as the service would have written them. */
    /** The seeded leases' keys: first, and analyzed before their leases, so that the leases' key checks probe it. */
    private static final String SEED_KEYS = """
            INSERT INTO lease_key (tenant, program, target_type, target_value, actor, operation)
            SELECT :tenant, 'default', 'opaque', :prefix || n, 'seeded', NULL FROM generate_series(1, :count) AS n
            """;

    /**
     * The seeded leases, one active lease on each seeded key, with their ACQUIRED events. In a statement of its own
     * after ANALYZE of lease_key: in one statement with the keys' insert, the foreign key's check of each lease
     * was planned while the statistics still said lease_key was (nearly) empty, as a scan of it, and a million
     * leases then took longer than the run had.
     */
    private static final String SEED = """
            WITH l AS (
                INSERT INTO lease (id, key_id, tenant, owner, holder, fencing_token, state, acquired_at,
                                   expires_at, max_expires_at, ttl_seconds, max_lifetime_seconds, metadata)
                SELECT gen_random_uuid(), k.id, k.tenant, :owner, 'seeded', nextval('fencing_token_seq'), 'active',
                       lease_now(), CAST(:expiresAt AS timestamptz), lease_now() + interval '1 day',
                       :ttl, 86400, '{}'
                FROM generate_series(1, :count) AS n
                JOIN lease_key k ON k.tenant = :tenant AND k.program = 'default' AND k.target_type = 'opaque'
                                AND k.target_value = :prefix || n AND k.actor = 'seeded' AND k.operation IS NULL
                ORDER BY k.id
                RETURNING tenant, id, fencing_token, acquired_at, expires_at
            )
            INSERT INTO lease_event (tenant, lease_id, lease_acquired_at, type, from_state, to_state, fencing_token, at,
                                     principal, details)
            SELECT tenant, id, acquired_at, 'ACQUIRED', NULL, 'active', fencing_token, acquired_at, :owner,
                   jsonb_build_object('expiresAt', rfc3339(expires_at), 'ttlSeconds', :ttl)
            FROM l
            """;

    /**
     * The keys of the cycle (the service's and pgbench's: tenant, actor and operation "bench", targets
     * numbered from 0), made beforehand: a cycle then measures the acquire of a key that has been used
     * before, the steady state, both in the service and in pgbench (whose script cannot branch on a new key).
     */
    private static final String CYCLE_KEYS = """
            INSERT INTO lease_key (tenant, program, target_type, target_value, actor, operation)
            SELECT 'bench', 'default', 'opaque', CAST(n AS text), 'bench', 'bench' FROM generate_series(0, :count - 1) AS n
            ON CONFLICT DO NOTHING
            """;

    record SeededLease(int n, UUID id, long fencingToken) {
    }

    private final JdbcClient jdbc;
    final String url;
    private final int cycleKeys;

    Database(String url, int cycleKeys) {
        this.url = url;
        this.cycleKeys = cycleKeys;
        // One connection for the whole run: the harness polls while it measures, and a new connection
        // per query would fork a PostgreSQL backend each time on the machine being measured.
        this.jdbc = JdbcClient.create(new SingleConnectionDataSource(url, true));
    }

    /**
     * Lease tables holding only {@code others} active leases of another tenant and the cycle's keys
     * (TRUNCATE is not refused
     * by the audit log's append-only trigger), with fresh statistics. Never empty: with statistics of
     * empty tables PostgreSQL plans sequential scans, and the service's pooled connections keep those
     * plans while the tables grow, until autovacuum analyzes them again (seen here: seconds of runs made
     * of sequential scans of lease_key).
     */
    void reset(int others) {
        // The service's sweeper may be mid-batch: its row locks and TRUNCATE's table locks can deadlock,
        // and PostgreSQL then cancels one of them. Try again.
        for (int attempt = 1; ; attempt++) {
            try {
                jdbc.sql("TRUNCATE lease_waiter, lease_event, lease, lease_key, idempotency_record").update();
                break;
            } catch (org.springframework.dao.DataAccessException e) {
                if (attempt == 5) {
                    throw e;
                }
            }
        }
        jdbc.sql("DROP TABLE IF EXISTS bench_lease").update();
        seed("other", "other", "o", others, now().plusSeconds(86_000), 86_000);
        cycleKeys();
        analyze();
    }

    void cycleKeys() {
        jdbc.sql(CYCLE_KEYS).param("count", cycleKeys).update();
    }

    void analyze() {
        jdbc.sql("VACUUM ANALYZE").update();
    }

    Instant now() {
        return jdbc.sql("SELECT lease_now()").query(OffsetDateTime.class).single().toInstant();
    }

    /** {@code count} active leases of {@code tenant} expiring at {@code expiresAt}. */
    void seed(String tenant, String owner, String prefix, int count, Instant expiresAt, int ttlSeconds) {
        jdbc.sql(SEED_KEYS).param("tenant", tenant).param("prefix", prefix).param("count", count).update();
        jdbc.sql("ANALYZE lease_key").update();
        jdbc.sql(SEED).param("tenant", tenant).param("owner", owner).param("prefix", prefix).param("count", count)
                .param("expiresAt", expiresAt.toString()).param("ttl", ttlSeconds).update();
    }

    /**
     * The leases of a prefix, numbered 1..n in {@code bench_lease}, so that pgbench can pick one by number
     * (it has no string variables).
     */
    List<SeededLease> numbered(String prefix) {
        jdbc.sql("""
                CREATE TABLE bench_lease AS
                SELECT CAST(substr(k.target_value, length(:prefix) + 1) AS int) AS n, l.id, l.fencing_token
                FROM lease l JOIN lease_key k ON k.id = l.key_id WHERE k.target_value LIKE :prefix || '%'
                """).param("prefix", prefix).update();
        jdbc.sql("ALTER TABLE bench_lease ADD PRIMARY KEY (n)").update();
        return jdbc.sql("SELECT n, id, fencing_token FROM bench_lease ORDER BY n")
                .query((rs, i) -> new SeededLease(rs.getInt(1), rs.getObject(2, UUID.class), rs.getLong(3))).list();
    }

    /** Whether any lease past its expiry is not yet marked: the first entry of the sweeper's index, cheap to poll. */
    boolean anyUnswept() {
        return jdbc.sql("SELECT EXISTS (SELECT 1 FROM lease WHERE state = 'active' AND expires_at <= lease_now())")
                .query(Boolean.class).single();
    }

    /** Leases past their expiry that the sweeper has not yet marked. */
    long unswept() {
        return jdbc.sql("SELECT count(*) FROM lease WHERE state = 'active' AND expires_at <= lease_now()")
                .query(Long.class).single();
    }

    /**
     * A new database in the same cluster, empty: the service's migrations make its tables. For a workload whose
     * instance must not share partitions with the others' (the retention workload's are 10 s wide).
     */
    Database newDatabase(String name) {
        jdbc.sql("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)").update();
        jdbc.sql("CREATE DATABASE " + name).update();
        return new Database(url.replaceFirst("(//[^/]+/)[^?]+", "$1" + name), 0);
    }

    /** Seconds since the oldest acquisition among the rows {@code sql} reads (one timestamp, null: none). */
    double ageOfOldest(String sql) {
        Double age = jdbc.sql("SELECT extract(epoch FROM lease_now() - (" + sql + "))").query(Double.class).single();
        return age == null ? 0 : age;
    }

    long count(String sql) {
        return jdbc.sql(sql).query(Long.class).single();
    }

    /** host, port, database and user of the JDBC URL, for pgbench. */
    List<String> pgbenchConnection() {
        URI uri = URI.create(url.substring("jdbc:".length()));
        String user = "postgres";
        if (uri.getQuery() != null) {
            for (String pair : uri.getQuery().split("&")) {
                if (pair.startsWith("user=")) {
                    user = pair.substring(5);
                }
            }
        }
        return List.of("-h", uri.getHost(), "-p", String.valueOf(uri.getPort()), "-U", user, uri.getPath().substring(1));
    }
}
