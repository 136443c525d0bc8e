package io.leasekeeper.retention;

import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
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
            DELETE FROM lease
            WHERE id IN (SELECT id FROM lease
                         WHERE state <> 'active' AND acquired_at < lease_now() - make_interval(secs => :keptSeconds)
                         ORDER BY acquired_at
                         LIMIT :batchSize)
            RETURNING key_id
            """;

    /**
     * The keys of a batch that nobody is acquiring now: an acquire holds its key's row lock from before it looks
     * at the key's leases until it commits its lease, so these keys' leases are read, by the next statement, only
     * after every such acquire has committed; a later acquire waits for this transaction and finds the key gone
     * (it makes the key anew, LeaseStore.lockKey).
     */
    private static final String LOCK_KEYS = """
            SELECT id FROM lease_key WHERE id = ANY (CAST(string_to_array(:keyIds, ',') AS bigint[])) FOR UPDATE SKIP LOCKED
            """;

    /** Of the locked keys, those left with no lease, no waiting acquire, no lock-delay and no watch. */
    private static final String DELETE_EMPTY_KEYS = """
            DELETE FROM lease_key k
            WHERE k.id = ANY (CAST(string_to_array(:keyIds, ',') AS bigint[]))
              AND NOT EXISTS (SELECT 1 FROM lease l WHERE l.key_id = k.id)
              AND NOT EXISTS (SELECT 1 FROM lease_waiter w WHERE w.key_id = k.id)
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
        List<Long> keyIds = jdbc.sql(DELETE_LEASES).param("keptSeconds", kept.toSeconds()).param("batchSize", batchSize)
                .query(Long.class).list();
        if (keyIds.isEmpty()) {
            return 0;
        }
        List<Long> locked = jdbc.sql(LOCK_KEYS).param("keyIds", idList(keyIds)).query(Long.class).list();
        if (!locked.isEmpty()) {
            jdbc.sql(DELETE_EMPTY_KEYS).param("keyIds", idList(locked)).update();
        }
        return keyIds.size();
    }

    private static String idList(List<Long> ids) {
        return ids.stream().distinct().map(String::valueOf).collect(Collectors.joining(","));
    }
}
