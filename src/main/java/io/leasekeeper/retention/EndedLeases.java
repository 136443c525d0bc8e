package io.leasekeeper.retention;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/**
 * The retention of lease rows and key rows, by the rule of the event partitions ({@link EventPartitions}): a lease
 * acquired more than the retention plus the lifetime cap ago, and ended, is deleted; so is its key, when no lease,
 * waiting acquire, lock-delay or watch is left on it.
 */
@Component
class EndedLeases {

    /** A batch of ended leases, oldest acquisitions first (index lease_ended_by_acquisition), and their keys. */
    private static final String DELETE_LEASES = """
            -- Across tenants: retention.
            DELETE FROM lease
            WHERE (tenant, id) IN (SELECT tenant, id FROM lease
                                   WHERE state <> 'active' AND acquired_at < lease_now() - make_interval(secs => :keptSeconds)
                                   ORDER BY acquired_at
                                   LIMIT :batchSize)
            RETURNING tenant, key_id AS id
            """;

    /**
     * The keys of a batch that nobody is acquiring now: an acquire holds its key's row lock from before it looks
     * at the key's leases until it commits its lease, so these keys' leases are read, by the next statement, only
     * after every such acquire has committed; a later acquire waits for this transaction and finds the key gone
     * (it makes the key anew, lease_acquire).
     */
    private static final String LOCK_KEYS = """
            -- Across tenants: retention.
            SELECT k.tenant, k.id FROM lease_key k
            JOIN unnest(CAST(:tenants AS text[]), CAST(:keyIds AS bigint[])) AS batch (tenant, id)
              ON k.tenant = batch.tenant AND k.id = batch.id
            FOR UPDATE OF k SKIP LOCKED
            """;

    /** Of the locked keys, those left with no lease, no waiting acquire, no lock-delay and no watch. */
    private static final String DELETE_EMPTY_KEYS = """
            -- Across tenants: retention.
            DELETE FROM lease_key k
            USING unnest(CAST(:tenants AS text[]), CAST(:keyIds AS bigint[])) AS batch (tenant, id)
            WHERE k.tenant = batch.tenant AND k.id = batch.id
              AND NOT EXISTS (SELECT 1 FROM lease l WHERE l.tenant = k.tenant AND l.key_id = k.id)
              AND NOT EXISTS (SELECT 1 FROM lease_waiter w WHERE w.tenant = k.tenant AND w.key_id = k.id)
              AND (k.delayed_until IS NULL OR k.delayed_until < lease_now())
              AND (k.watched_until IS NULL OR k.watched_until < lease_now())
            """;

    private final JdbcClient jdbc;

    EndedLeases(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    /**
     * Deletes up to {@code batchSize} leases past their retention, and the keys they leave empty. Returns how many
     * leases it deleted.
     */
    @Transactional
    public int deleteBatch(Duration kept, int batchSize) {
        List<Key> keys = jdbc.sql(DELETE_LEASES).param("keptSeconds", kept.toSeconds()).param("batchSize", batchSize)
                .query(EndedLeases::key).list();
        if (keys.isEmpty()) {
            return 0;
        }
        List<Key> locked = withKeys(jdbc.sql(LOCK_KEYS), keys).query(EndedLeases::key).list();
        if (!locked.isEmpty()) {
            withKeys(jdbc.sql(DELETE_EMPTY_KEYS), locked).update();
        }
        return keys.size();
    }

    /** A key, named by its primary key. */
    private record Key(String tenant, long id) {
    }

    private static Key key(ResultSet rs, int row) throws SQLException {
        return new Key(rs.getString("tenant"), rs.getLong("id"));
    }

    private static JdbcClient.StatementSpec withKeys(JdbcClient.StatementSpec statement, List<Key> keys) {
        List<Key> distinct = keys.stream().distinct().toList();
        return statement.param("tenants", distinct.stream().map(Key::tenant).toArray(String[]::new))
                .param("keyIds", distinct.stream().map(Key::id).toArray(Long[]::new));
    }
}
