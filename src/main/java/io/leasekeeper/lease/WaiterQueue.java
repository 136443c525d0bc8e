package io.leasekeeper.lease;

import static io.leasekeeper.lease.LeaseRows.instant;
import static io.leasekeeper.lease.LeaseRows.keyParams;

import io.leasekeeper.idempotency.IdempotencyStore;
import io.leasekeeper.key.LeaseKey;
import io.leasekeeper.security.Caller;
import io.leasekeeper.wait.FreedKeys;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

/**
 * The waiting acquires' side of a key in the database: the marks that make a transition freeing a key notify
 * ({@code lease_key.watched_until}), the queue of waiting requests ({@code lease_waiter}), a waiting acquire's
 * look at a key without its lock, and the notification of freed keys. Handing a freed key to the queue is a
 * transition, and is {@link LeaseStore}'s.
 */
@Component
class WaiterQueue {

    /*
     * A key someone waits for is marked watched (lease_key.watched_until), so that the transition freeing it
     * notifies. A mark reaches :horizon seconds ahead (twice the longest wait), and is written only when it
     * would not cover the :seconds the request may still wait: most waits read it and write nothing.
     */

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

    /**
     * The same for a key already locked by a waiting acquire's transaction: the counts of the keys to mark
     * (none when the mark is long enough) and marked.
     */
    private static final String WATCH_KEY = """
            WITH to_mark AS MATERIALIZED (
                SELECT id FROM lease_key
                WHERE tenant = :tenant AND id = :keyId
                  AND (watched_until IS NULL OR watched_until < lease_now() + make_interval(secs => :seconds))
            ), marked AS (
                UPDATE lease_key k SET watched_until = lease_now() + make_interval(secs => :horizon)
                FROM to_mark m WHERE k.tenant = :tenant AND k.id = m.id
                RETURNING 1
            )
            SELECT (SELECT count(*) FROM to_mark) AS to_mark, (SELECT count(*) FROM marked) AS marked
            """;

    /**
     * A waiting acquire's look at a key without locking it: busy (held by an unexpired lease, or in its
     * lock-delay) and marked watched long enough, or not. A busy key so marked needs no lock and no write:
     * a transition that frees it later sees the mark and notifies. Anything else takes the locking path.
     */
    static final String PEEK_KEY = """
            SELECT k.id, lease_now() AS now,
                   CASE WHEN k.delayed_until > lease_now() THEN k.delayed_until END AS delayed_until,
                   coalesce(k.watched_until >= lease_now() + make_interval(secs => :seconds), false) AS watched,
                   l.owner, l.holder, l.expires_at
            FROM lease_key k
            LEFT JOIN LATERAL (SELECT * FROM lease WHERE tenant = :tenant AND key_id = k.id
                               ORDER BY fencing_token DESC LIMIT 1) l
                   ON l.state = 'active' AND l.expires_at > lease_now()
            WHERE k.tenant = :tenant AND k.program = :program AND k.target_type = :targetType
              AND k.target_value = :targetValue AND k.actor = :actor
              AND k.operation IS NOT DISTINCT FROM CAST(:operation AS text)
            """;

    /** Wakes the waiters of freed keys on every instance, when the transaction commits. */
    private static final String NOTIFY_FREED = "SELECT pg_notify('" + FreedKeys.CHANNEL + "', :keyIds)";

    /**
     * A waiting acquire's row in its key's queue, written once, when a try first finds the key busy; the
     * row's wait ends with the request's. A retry of the same request (Idempotency-Key and fingerprint) takes
     * over the row its first request left (that request failed, or its client gave up on it): the row gets
     * the retry's id and wait, and keeps its place, and the offer of the key to it when one runs (then the retry
     * takes the key at once). A row of the same Idempotency-Key whose request differs (a
     * key reused while its first request waits) is not taken over: nothing
     * is written, which is ordinary, and the statement returns that row's fingerprint to tell it from a write
     * that was swallowed. The row is read in the statement's snapshot, which holds every row of the key: the
     * tries of one Idempotency-Key run one after another, each holding its claim (IdempotencyStore) until
     * it commits.
     */
    private static final String QUEUE = """
            WITH queued AS (
                INSERT INTO lease_waiter (id, key_id, wait_until, tenant, owner, holder, ttl_seconds,
                                          max_lifetime_seconds, lock_delay_seconds, job_id, trace_id, metadata,
                                          request_id, request_trace_id, idempotency_key, fingerprint)
                VALUES (:waiterId, :keyId, lease_now() + make_interval(secs => :waitSeconds), :tenant, :principal,
                        :holder, :ttl, :maxLifetime, :lockDelay, :jobId, :leaseTraceId, CAST(:metadata AS jsonb),
                        :requestId, :traceId, :idempotencyKey, :fingerprint)
                ON CONFLICT (tenant, owner, idempotency_key) WHERE idempotency_key IS NOT NULL
                DO UPDATE SET id = EXCLUDED.id, wait_until = EXCLUDED.wait_until
                WHERE lease_waiter.fingerprint = EXCLUDED.fingerprint
                RETURNING coalesce(offered_until > lease_now(), false) AS offered
            )
            SELECT (SELECT count(*) FROM queued) AS queued, (SELECT bool_or(offered) FROM queued) AS offered,
                   (SELECT fingerprint FROM lease_waiter
                    WHERE tenant = :tenant AND owner = :principal AND idempotency_key = :idempotencyKey) AS fingerprint
            """;

    /**
     * A waiting acquire leaves its key's queue (it answers, or its client has gone): its row is locked first and then
     * deleted, so the counts of the rows found and deleted tell a row gone meanwhile (a retry took it over under a new
     * id; ordinary) from a row found and not deleted (a contradiction).
     */
    private static final String LEAVE_QUEUE = """
            WITH queued AS MATERIALIZED (
                SELECT id FROM lease_waiter WHERE tenant = :tenant AND id = :waiterId FOR UPDATE
            ), gone AS (
                DELETE FROM lease_waiter w USING queued q WHERE w.tenant = :tenant AND w.id = q.id RETURNING 1
            )
            SELECT (SELECT count(*) FROM queued) AS queued, (SELECT count(*) FROM gone) AS deleted
            """;

    /**
     * A key as a waiting acquire sees it without locking it, at {@code now}: its lock-delay if it runs, whether
     * it is marked watched long enough, and its unexpired active lease's owner, holder and expiry (null: none).
     */
    record Peek(long keyId, Instant now, Instant delayedUntil, boolean watched, String owner, String holder,
                Instant expiresAt) {
    }

    private final JdbcClient jdbc;
    private final LeaseRows rows;

    WaiterQueue(JdbcClient jdbc, LeaseRows rows) {
        this.jdbc = jdbc;
        this.rows = rows;
    }

    /** A watch of a lease of this tenant marks its key watched for {@code seconds}; empty: no such lease. */
    Optional<Long> watchKeyOfLease(UUID leaseId, String tenant, int seconds, int horizon) {
        return jdbc.sql(WATCH_KEY_OF_LEASE).param("leaseId", leaseId).param("tenant", tenant)
                .param("seconds", seconds).param("horizon", horizon).query((rs, n) -> {
                    requireWritten("WATCH_KEY_OF_LEASE", "the key of lease " + leaseId, rs.getLong("to_mark"),
                            rs.getLong("marked"));
                    return rs.getLong("key_id");
                }).optional();
    }

    /** With the key locked: a waiting acquire marks it watched for {@code seconds}. */
    void watchKey(String tenant, long keyId, int seconds, int horizon) {
        jdbc.sql(WATCH_KEY).param("tenant", tenant).param("keyId", keyId).param("seconds", seconds).param("horizon", horizon)
                .query(rs -> {
                    requireWritten("WATCH_KEY", "key " + keyId, rs.getLong("to_mark"), rs.getLong("marked"));
                });
    }

    /** A waiting acquire's unlocked look at the key: empty when the key does not exist yet. */
    Optional<Peek> peek(LeaseKey key, int seconds) {
        return jdbc.sql(PEEK_KEY).params(keyParams(key)).param("seconds", seconds)
                .query((rs, n) -> new Peek(rs.getLong("id"), instant(rs, "now"), instant(rs, "delayed_until"),
                        rs.getBoolean("watched"), rs.getString("owner"), rs.getString("holder"),
                        instant(rs, "expires_at")))
                .optional();
    }

    /** Notifies every instance's waiters, at commit, with this payload ({@link FreedKeys}). */
    void notifyFreed(String keyIds) {
        jdbc.sql(NOTIFY_FREED).param("keyIds", keyIds).query(rs -> { });
    }

    /** How a waiting acquire's row joined its key's queue. */
    enum Queued {
        /** Written, or taken over from its first request. */
        QUEUED,
        /** Taken over from its first request, to which the key is offered: the retry takes it now. */
        OFFERED,
        /** Not written: the row of its Idempotency-Key belongs to a different request. */
        KEY_REUSED
    }

    /** Writes a waiting acquire's row in its key's queue, or takes over the row its first request left. */
    Queued queue(UUID waiterId, long keyId, AcquireCommand command, String leaseTraceId, Caller caller,
                  IdempotencyStore.Request idempotency) {
        String fingerprint = idempotency == null ? null : idempotency.fingerprint();
        return jdbc.sql(QUEUE).params(rows.asked(command, leaseTraceId, caller)).param("keyId", keyId)
                .param("waiterId", waiterId)
                .param("waitSeconds", command.waitSeconds())
                .param("idempotencyKey", idempotency == null ? null : idempotency.key())
                .param("fingerprint", fingerprint)
                .query((rs, n) -> {
                    long queued = rs.getLong("queued");
                    String found = rs.getString("fingerprint");
                    if (queued == 0 && found != null && !found.equals(fingerprint)) {
                        return Queued.KEY_REUSED;
                    }
                    if (queued != 1) {
                        throw LeaseStore.contradictionIn("WaiterQueue", "QUEUE", "waiting row " + waiterId + " of key "
                                + keyId, "it wrote " + queued + " rows"
                                + (found == null ? "" : ", though the row it found was its request's"));
                    }
                    return rs.getBoolean("offered") ? Queued.OFFERED : Queued.QUEUED;
                }).single();
    }

    /** Deletes the waiting acquire's row, when it is still there. */
    void leaveQueue(String tenant, UUID waiterId) {
        jdbc.sql(LEAVE_QUEUE).param("tenant", tenant).param("waiterId", waiterId).query(rs -> {
            requireWritten("LEAVE_QUEUE", "waiting row " + waiterId, rs.getLong("queued"), rs.getLong("deleted"));
        });
    }

    /**
     * A statement that locked (or holds the key's lock on) the rows it found to write wrote every one of them:
     * none could change or go meanwhile, so fewer means a write was swallowed.
     */
    private static void requireWritten(String statement, String subject, long found, long written) {
        if (written != found) {
            throw LeaseStore.contradictionIn("WaiterQueue", statement, subject, "it found " + found + " rows to write under their lock but wrote "
                    + written);
        }
    }
}
