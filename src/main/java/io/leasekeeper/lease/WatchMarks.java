package io.leasekeeper.lease;

import io.leasekeeper.config.LeasekeeperProperties;
import java.util.Optional;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

/**
 * A watch's mark on its lease's key ({@code lease_key.watched_until}): the transition that frees a marked key notifies
 * its watchers. A waiting acquire's mark and queue row are written by its acquire's function ({@link LeaseStore}).
 */
@Component
class WatchMarks {

    /**
     * A watch of a lease marks its key; the key row is locked and written only when the mark is short. Locked
     * first (a concurrent watch's longer mark, re-read at the lock, leaves nothing to mark), so that a short
     * mark not written tells itself from one already long enough: the key and the counts of the keys to mark
     * and marked.
     */
    private static final String WATCH_KEY_OF_LEASE = """
            WITH to_mark AS MATERIALIZED (
                SELECT k.id FROM lease l JOIN lease_key k ON k.tenant = :tenant AND k.id = l.key_id
                WHERE l.tenant = :tenant AND l.id = :leaseId
                  AND (k.watched_until IS NULL OR k.watched_until < lease_now() + make_interval(secs => :seconds))
                FOR NO KEY UPDATE OF k
            ), marked AS (
                UPDATE lease_key k SET watched_until = lease_now() + make_interval(secs => :horizon)
                FROM to_mark m WHERE k.tenant = :tenant AND k.id = m.id
                RETURNING 1
            )
            SELECT key_id, (SELECT count(*) FROM to_mark) AS to_mark, (SELECT count(*) FROM marked) AS marked
            FROM lease WHERE tenant = :tenant AND id = :leaseId
            """;

    private final JdbcClient jdbc;
    private final int horizon;

    WatchMarks(JdbcClient jdbc, LeasekeeperProperties properties) {
        this.jdbc = jdbc;
        this.horizon = horizon(properties);
    }

    /**
     * How far ahead, in seconds, a mark reaches (a watch's, or a waiting acquire's): twice the longest wait, so that
     * most waits find it long enough and write nothing.
     */
    static int horizon(LeasekeeperProperties properties) {
        return 2 * ((int) properties.waiting().max().toSeconds() + 1);
    }

    /** A watch of a lease of this tenant marks its key watched for {@code seconds}; empty: no such lease. */
    Optional<Long> watchKeyOfLease(UUID leaseId, String tenant, int seconds) {
        return jdbc.sql(WATCH_KEY_OF_LEASE).param("leaseId", leaseId).param("tenant", tenant)
                .param("seconds", seconds).param("horizon", horizon).query((rs, n) -> {
                    requireWritten("WATCH_KEY_OF_LEASE", "the key of lease " + leaseId, rs.getLong("to_mark"),
                            rs.getLong("marked"));
                    return rs.getLong("key_id");
                }).optional();
    }

    /**
     * A statement that locked (or holds the key's lock on) the rows it found to write wrote every one of them:
     * none could change or go meanwhile, so fewer means a write was swallowed.
     */
    private static void requireWritten(String statement, String subject, long found, long written) {
        if (written != found) {
            throw new IllegalStateException("WatchMarks." + statement + " on " + subject + ": it found " + found
                    + " rows to write under their lock but wrote " + written
                    + " (its row counts contradict what it assumed; rolled back)");
        }
    }
}
