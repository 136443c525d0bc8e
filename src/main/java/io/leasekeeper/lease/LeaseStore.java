package io.leasekeeper.lease;

import io.leasekeeper.audit.EventType;
import io.leasekeeper.idempotency.IdempotencyStore;
import io.leasekeeper.security.Caller;
import io.leasekeeper.key.LeaseKey;
import io.leasekeeper.key.Target;
import io.leasekeeper.key.TargetType;
import io.leasekeeper.wait.FreedKeys;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * All SQL of the lease feature, and nothing else. Time is always PostgreSQL's, read after the key's row lock is
 * held. The 1.0 acquire, the renew and the release are functions of the database (db/migration/R__*.sql), called here in one round
 * trip; the locking path's statements are below, each named, and each that changes a lease also writes its audit
 * event in the same statement.
 */
@Component
class LeaseStore {

    private static final String COLUMNS = """
            l.id, l.owner, l.holder, l.fencing_token, l.state, l.acquired_at, l.renewed_at, l.expires_at,
            l.max_expires_at, l.ended_at, l.end_reason, l.ttl_seconds, l.max_lifetime_seconds,
            l.lock_delay_seconds, l.job_id, l.trace_id, l.metadata,
            k.tenant, k.program, k.target_type, k.target_value, k.actor, k.operation""";

    /** The key's row lock, with its lock-delay (when it has not passed) and whether anyone waits for it. */
    private static final String LOCK_KEY = """
            SELECT tenant, id, lease_now() AS now,
                   CASE WHEN delayed_until > lease_now() THEN delayed_until END AS delayed_until,
                   coalesce(watched_until > lease_now(), false) AS watched
            FROM lease_key
            WHERE tenant = :tenant AND program = :program AND target_type = :targetType
              AND target_value = :targetValue AND actor = :actor
              AND operation IS NOT DISTINCT FROM CAST(:operation AS text)
            FOR NO KEY UPDATE
            """;

    /** A key's first acquire makes its row; a concurrent first acquire waits here for the other's commit. */
    private static final String INSERT_KEY_IF_ABSENT = """
            INSERT INTO lease_key (tenant, program, target_type, target_value, actor, operation)
            VALUES (:tenant, :program, :targetType, :targetValue, :actor, :operation)
            ON CONFLICT DO NOTHING
            """;

    /*
     * Every statement of a request names its tenant on every table it reaches (tenant = :tenant), and rows by
     * their primary keys, which lead with the tenant: so each reaches one tenant's rows, one partition of a table
     * partitioned by tenant, one node of one distributed by it (docs/guides/scale-out.md; TenantPartitionsTest). A lease
     * named by its id is found by (tenant, id), its primary key: one probe (docs/decisions/tenant-statistics.md,
     * for a tenant the statistics do not know yet). A key's active lease, when it has one, is its newest (a key's grants are in token
     * order, and a grant needs the key free), so it is found as the key's newest lease, one probe of
     * lease_list_by_key (tenant, key_id, fencing_token DESC), then checked active: asked for "the key's lease in
     * state active", the planner may take a tenant-led index of the active leases and filter them for the key when
     * it estimates the tenant's active leases at a row or so, as for a tenant that grew since the last ANALYZE
     * (LeasePlansTest). For the same reason the updates of
     * a lease named by its id check that it is active as "ended_at IS NULL" (the same, by the check
     * lease_ended_iff_not_active) rather than "state = 'active'", which would let a partial index of the active
     * leases, smaller than the primary key and so cheaper to the planner when the estimates tie, serve the update
     * with a scan of the tenant's active leases.
     */

    private static final String LOCK_KEY_OF_LEASE = """
            SELECT k.tenant, k.id, lease_now() AS now, NULL AS delayed_until,
                   coalesce(k.watched_until > lease_now(), false) AS watched
            FROM lease l JOIN lease_key k ON k.tenant = :tenant AND k.id = l.key_id
            WHERE l.tenant = :tenant AND l.id = :leaseId
            FOR NO KEY UPDATE OF k
            """;

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

    /*
     * The transitions of one call each: the 1.0 acquire, the renew and the release, each one function, whole in its
     * repeatable migration (R__grant_and_acquire.sql, R__renew_and_release.sql), that locks the key, decides at the
     * time read after the lock and writes the transition with its audit event; a write swallowed raises SQLSTATE
     * LK001 and rolls the call back. The service calls each in one round trip, in autocommit.
     */

    private static final String ACQUIRE = """
            SELECT * FROM lease_acquire(:tenant, :program, :targetType, :targetValue, :actor, CAST(:operation AS text),
                                        :principal, :holder, :ttl, :maxLifetime, :lockDelay, CAST(:jobId AS text),
                                        CAST(:leaseTraceId AS text), CAST(:metadata AS jsonb), CAST(:requestId AS text),
                                        CAST(:traceId AS text))
            """;

    private static final String RENEW_CALL = """
            SELECT * FROM lease_renew(:tenant, :leaseId, :principal, :fencingToken, CAST(:ttl AS integer),
                                      CAST(:requestId AS text), CAST(:traceId AS text))
            """;

    private static final String RELEASE_CALL = """
            SELECT * FROM lease_release(:tenant, :leaseId, :principal, :fencingToken, CAST(:requestId AS text),
                                        CAST(:traceId AS text))
            """;

    /** Wakes the waiters of freed keys on every instance, when the transaction commits. */
    private static final String NOTIFY_FREED = "SELECT pg_notify('" + FreedKeys.CHANNEL + "', :keyIds)";

    private static final String BY_ID = """
            SELECT lease_now() AS now, %s
            FROM lease l JOIN lease_key k ON k.tenant = :tenant AND k.id = l.key_id
            WHERE l.tenant = :tenant AND l.id = :leaseId
            """.formatted(COLUMNS);

    /*
     * The transitions. Each runs with the key's row locked, so its snapshot and its clock (lease_now(),
     * the time of the decision) are taken after every earlier transition of the key has committed. Each
     * is one statement: it reads the lease as it was, changes it only if the change is allowed, and
     * writes the change's audit event; it returns the changed lease, or when nothing changed the lease
     * as it was, which tells the caller why.
     */

    /**
     * With the key locked, its lock-delay and its queue seen to: 'granted' (lease_grant), or 'unchanged' with
     * the key's active lease as it is, which may be past its expiry (not yet recorded by the sweeper).
     */
    static final String ACQUIRE_IF_FREE = """
            SELECT * FROM lease_acquire_locked(:tenant, :keyId, :principal, :holder, :ttl, :maxLifetime,
                                               :lockDelay, CAST(:jobId AS text), CAST(:leaseTraceId AS text),
                                               CAST(:metadata AS jsonb), CAST(:requestId AS text),
                                               CAST(:traceId AS text))
            """;

    /**
     * The hand-over (lease_hand_over, R__waiter_queue.sql): with the key locked and free, it goes to its queue. The first row whose
     * wait runs is offered the key, for {@link #OFFER_SECONDS}, and notified (payload {@code keyId>waiterId},
     * {@link FreedKeys}); the key is granted only to the waiting request itself ({@code :taker}, its row), in its own
     * transaction, after it has seen its client still there.
     */
    private static final String HAND_OVER = """
            SELECT * FROM lease_hand_over(:tenant, :keyId, CAST(:taker AS uuid), :offerSeconds, CAST(:channel AS text))
            """;

    /**
     * How long an offer of a key keeps it for the waiting row it was made to: long enough for the request to wake,
     * take a slot (at most {@code leasekeeper.limits.queue-timeout}, 2 s by default) and take the key; and how long a
     * key stays with a waiter whose instance stopped before its offer passes on.
     */
    static final int OFFER_SECONDS = 5;

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
     * Ends an active lease of the tenant: released by its owner, if the token is its own (compare-and-delete),
     * or revoked by an admin, whoever holds it. A revoke starts the key's lock-delay, when the lease has one.
     * Returns the lease as it is now, or when nothing changed as it was, which tells the caller why; with the
     * time of the decision and the counts of what it wrote besides the lease, for {@link #requireTransition}.
     */
    static final String END = """
            WITH clock AS (SELECT lease_now() AS now),
            found AS MATERIALIZED (SELECT * FROM lease WHERE tenant = :tenant AND id = :leaseId),
            ended AS (
                UPDATE lease l
                SET state = :state, ended_at = clock.now, end_reason = :reason
                FROM clock, found f
                WHERE l.tenant = :tenant AND l.id = :leaseId AND l.ended_at IS NULL AND l.expires_at > clock.now
                  AND (:state = 'revoked'
                       OR (l.owner = :principal AND l.fencing_token = CAST(:fencingToken AS bigint)))
                RETURNING l.*
            ), delayed AS (
                UPDATE lease_key k SET delayed_until = e.ended_at + make_interval(secs => e.lock_delay_seconds)
                FROM ended e
                WHERE k.tenant = :tenant AND k.id = e.key_id AND e.state = 'revoked' AND e.lock_delay_seconds > 0
                RETURNING 1
            ), event AS (
                INSERT INTO lease_event (tenant, lease_id, lease_acquired_at, type, from_state, to_state,
                                         fencing_token, at, principal, request_id, trace_id, details)
                SELECT tenant, id, acquired_at, :eventType, 'active', state, fencing_token, ended_at,
                       :principal, :requestId, :traceId, CAST(:details AS jsonb)
                FROM ended
                RETURNING 1
            )
            SELECT clock.now, l.changed, (SELECT count(*) FROM event) AS events,
                   (SELECT count(*) FROM delayed) AS delays,
                   (SELECT count(*) FROM ended WHERE state = 'revoked' AND lock_delay_seconds > 0) AS delays_due, %s
            FROM (SELECT true AS changed, * FROM ended
                  UNION ALL
                  SELECT false, * FROM found WHERE NOT EXISTS (SELECT 1 FROM ended)) AS l
            JOIN lease_key k ON k.tenant = :tenant AND k.id = l.key_id
            CROSS JOIN clock
            """.formatted(COLUMNS);

    /**
     * Records the expiry of a lease whose TTL has passed, as of its expiry instant, with its EXPIRED
     * event: an acquire finding the key's lease past its TTL before the sweeper did. A lease with a
     * lock-delay delays its key until {@code expiresAt + lockDelaySeconds}. Returns whether it expired the
     * lease, and the key's lock-delay when it has not passed yet.
     */
    static final String EXPIRE = """
            WITH expired AS (
                UPDATE lease SET state = 'expired', ended_at = expires_at, end_reason = 'expired'
                WHERE tenant = :tenant AND id = :leaseId AND ended_at IS NULL AND expires_at <= lease_now()
                RETURNING tenant, id, key_id, fencing_token, acquired_at, expires_at, lock_delay_seconds
            ), delayed AS (
                UPDATE lease_key k SET delayed_until = e.expires_at + make_interval(secs => e.lock_delay_seconds)
                FROM expired e
                WHERE k.tenant = :tenant AND k.id = e.key_id AND e.lock_delay_seconds > 0
                RETURNING k.delayed_until
            ), event AS (
                INSERT INTO lease_event (tenant, lease_id, lease_acquired_at, type, from_state, to_state,
                                         fencing_token, at, principal, request_id, trace_id, details)
                SELECT tenant, id, acquired_at, 'EXPIRED', 'active', 'expired', fencing_token, lease_now(),
                       :principal, :requestId, :traceId, jsonb_build_object('expiresAt', rfc3339(expires_at))
                FROM expired
                RETURNING 1
            )
            SELECT (SELECT count(*) FROM expired) AS expired, (SELECT count(*) FROM event) AS events,
                   (SELECT count(*) FROM delayed) AS delays,
                   (SELECT count(*) FROM expired WHERE lock_delay_seconds > 0) AS delays_due,
                   (SELECT delayed_until FROM delayed WHERE delayed_until > lease_now()) AS delayed_until
            """;

    static final String CURRENT_OF_KEY = """
            SELECT lease_now() AS now, %s
            FROM lease_key k
            CROSS JOIN LATERAL (SELECT * FROM lease WHERE tenant = :tenant AND key_id = k.id
                                ORDER BY fencing_token DESC LIMIT 1) l
            WHERE k.tenant = :tenant AND k.program = :program AND k.target_type = :targetType
              AND k.target_value = :targetValue AND k.actor = :actor
              AND k.operation IS NOT DISTINCT FROM CAST(:operation AS text)
              AND l.state = 'active' AND l.expires_at > lease_now()
            """.formatted(COLUMNS);

    /**
     * Largest fencing token first (a key's later leases before its earlier ones; across keys no order of time),
     * keyset-paginated on (fencing token, id); the state filter is the effective state. A cursor
     * without an id (before per-key tokens) continues below its token.
     */
    private static final String LIST = """
            SELECT lease_now() AS now, %s
            FROM lease l JOIN lease_key k ON k.tenant = :tenant AND k.id = l.key_id
            WHERE l.tenant = :tenant
              AND (CAST(:program AS text) IS NULL OR k.program = :program)
              AND (CAST(:actor AS text) IS NULL OR k.actor = :actor)
              AND (CAST(:targetType AS text) IS NULL OR k.target_type = :targetType)
              AND (CAST(:targetValue AS text) IS NULL OR k.target_value = :targetValue)
              AND (CAST(:operation AS text) IS NULL OR k.operation = :operation)
              AND (CAST(:owner AS text) IS NULL OR l.owner = :owner)
              AND (CAST(:holder AS text) IS NULL OR l.holder = :holder)
              AND (CAST(:state AS text) IS NULL OR
                   CASE WHEN l.state = 'active' AND l.expires_at <= lease_now() THEN 'expired'
                        ELSE l.state END = :state)
              AND (CAST(:before AS bigint) IS NULL OR (l.fencing_token <= :before
                   AND (l.fencing_token < :before OR l.id < CAST(:beforeId AS uuid))))
            ORDER BY l.fencing_token DESC, l.id DESC
            LIMIT :limit
            """.formatted(COLUMNS);

    /**
     * The leases marked active: still within their TTL, past it but not yet swept, and how long ago the
     * oldest unswept one expired (the sweeper's lag), all by the database's clock. One scan of the
     * active rows of every tenant; run at a bounded rate, never per scrape.
     */
    private static final String ACTIVE_COUNTS = """
            -- Across tenants: the gauges' counts.
            SELECT count(*) FILTER (WHERE expires_at > lease_now()) AS active,
                   count(*) FILTER (WHERE expires_at <= lease_now()) AS unswept,
                   coalesce(extract(epoch FROM lease_now() - min(expires_at) FILTER (WHERE expires_at <= lease_now())), 0)
                       AS lag_seconds
            FROM lease WHERE state = 'active'
            """;

    private static final TypeReference<Map<String, Object>> JSON_OBJECT = new TypeReference<>() {
    };

    /**
     * A key's row, locked until the transaction ends at {@code now}: its tenant and id, the end of its lock-delay
     * when that has not passed (else null; not read by the lock of a lease's key), and whether a request waits for it.
     */
    record KeyLock(String tenant, long id, Instant now, Instant delayedUntil, boolean watched) {
    }

    /**
     * A key as a waiting acquire sees it without locking it, at {@code now}: its lock-delay if it runs, whether
     * it is marked watched long enough, and its unexpired active lease's owner, holder and expiry (null: none).
     */
    record Peek(long keyId, Instant now, Instant delayedUntil, boolean watched, String owner, String holder,
                Instant expiresAt) {
    }

    /** What a hand-over did with a free key: granted it to the calling waiter, or offered it to a row. */
    sealed interface HandOver {

        /** The calling waiting request's row was the first: the key is granted to it, and its row is gone. */
        record Granted(AtTime lease) implements HandOver {
        }

        /**
         * The key is offered to the row {@code waiterId} (made now when {@code made}, else earlier) until {@code until};
         * the key is busy for everyone else meanwhile, as if that request's owner and holder held it.
         */
        record Offered(UUID waiterId, String owner, String holder, Instant until, Instant now, boolean made)
                implements HandOver {
        }
    }

    /** What recording an expiry did: whether it expired the lease, and the key's lock-delay if it runs. */
    record Expiry(boolean expired, Instant delayedUntil) {
    }

    /** A lease as read at {@code now}, the database time of the statement that read it. */
    record AtTime(Instant now, Lease lease) {
    }

    /**
     * What a transition statement returns: {@code changed} with the lease as it is now, or unchanged with
     * the lease as it was, read at {@code now}, the time of the decision.
     */
    record Transition(Instant now, boolean changed, Lease lease) {
    }

    record ListFilter(String tenant, String program, String actor, String targetType, String targetValue,
                      String operation, String owner, String holder, String state, ListPosition before, int limit) {
    }

    /**
     * Where a page of the list ended: its last lease's fencing token and id. Tokens of different keys may be
     * equal, so the id orders those; a cursor of a version before per-key tokens has no id (null).
     */
    record ListPosition(long fencingToken, UUID leaseId) {
    }

    private final JdbcClient jdbc;
    private final JsonMapper json;

    LeaseStore(JdbcClient jdbc, JsonMapper json) {
        this.jdbc = jdbc;
        this.json = json;
    }

    /** Locks the key's row until the transaction ends, first making it if the key is new. */
    KeyLock lockKey(LeaseKey key) {
        Optional<KeyLock> locked = jdbc.sql(LOCK_KEY).params(keyParams(key)).query(LeaseStore::keyLock).optional();
        if (locked.isPresent()) {
            return locked.get();
        }
        jdbc.sql(INSERT_KEY_IF_ABSENT).params(keyParams(key)).update(); // 0 rows: a concurrent acquire made it
        return jdbc.sql(LOCK_KEY).params(keyParams(key)).query(LeaseStore::keyLock).optional()
                .orElseThrow(() -> contradiction("INSERT_KEY_IF_ABSENT", "key " + key,
                        "the key's row was neither found nor made"));
    }

    /** Locks the key of a lease of this tenant; empty when there is no such lease. */
    Optional<KeyLock> lockKeyOfLease(UUID leaseId, String tenant) {
        return jdbc.sql(LOCK_KEY_OF_LEASE).param("leaseId", leaseId).param("tenant", tenant)
                .query(LeaseStore::keyLock).optional();
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

    Optional<AtTime> byId(UUID leaseId, String tenant) {
        return jdbc.sql(BY_ID).param("leaseId", leaseId).param("tenant", tenant).query(this::atTime).optional();
    }

    /** The outcomes the functions answer, by their names there in lower case. */
    enum Outcome {
        GRANTED, HELD, DELAYED, RENEWED, RELEASED, UNCHANGED, LOCKED_PATH, NOT_FOUND;

        static Outcome of(String name) {
            return valueOf(name.toUpperCase(java.util.Locale.ROOT)); // an unknown name fails: never ignored
        }
    }

    /** What a transition of one call answered: its outcome, and the lease (null: none) at {@code now}. */
    record Call(Outcome outcome, Instant now, Lease lease) {

        /** This outcome, from a function that never answers it. */
        IllegalStateException unexpected(String function) {
            return new IllegalStateException(function + " answered " + outcome + ", which it never answers");
        }
    }

    /** A 1.0 acquire's one call, and the key's id and lock-delay (when it runs) with it. */
    record Acquired(Call call, long keyId, Instant delayedUntil) {
    }

    /** The 1.0 acquire in one call: 'granted', 'held', 'delayed' or 'locked_path' (nothing changed). */
    Acquired acquire(AcquireCommand command, String leaseTraceId, Caller caller) {
        return jdbc.sql(ACQUIRE).params(keyParams(command.key())).params(asked(command, leaseTraceId, caller))
                .query((rs, n) -> new Acquired(call(rs, n), rs.getLong("key_id"), instant(rs, "delayed_until")))
                .single();
    }

    /** A renew's one call: 'renewed' with its beat, or 'unchanged'; empty when the tenant has no such lease. */
    Optional<Renewal> renew(UUID leaseId, long fencingToken, Integer ttlSeconds, Caller caller) {
        return jdbc.sql(RENEW_CALL).params(onLease(leaseId, caller)).param("fencingToken", fencingToken)
                .param("ttl", ttlSeconds)
                .query((rs, n) -> new Renewal(call(rs, n), rs.getDouble("beat"))).optional()
                .filter(renewal -> renewal.call().outcome() != Outcome.NOT_FOUND);
    }

    /** A release's one call: 'released', 'unchanged' or 'locked_path'; empty when the tenant has no such lease. */
    Optional<Call> releaseInOneCall(UUID leaseId, long fencingToken, Caller caller) {
        return jdbc.sql(RELEASE_CALL).params(onLease(leaseId, caller)).param("fencingToken", fencingToken)
                .query(this::call).optional().filter(call -> call.outcome() != Outcome.NOT_FOUND);
    }

    private Call call(ResultSet rs, int row) throws SQLException {
        return new Call(Outcome.of(rs.getString("outcome")), instant(rs, "now"),
                rs.getObject("id") == null ? null : lease(rs, row));
    }

    /** With the key locked: 'granted', or 'unchanged' with the key's active lease, maybe past its expiry. */
    Call acquireIfFree(long keyId, AcquireCommand command, String leaseTraceId, Caller caller) {
        return jdbc.sql(ACQUIRE_IF_FREE).params(asked(command, leaseTraceId, caller)).param("keyId", keyId)
                .query(this::call).single();
    }

    /**
     * With the key locked: when it is free, hands it to its queue ({@code taker}: the calling waiting request's row,
     * or null), notifying every instance of an offer when {@code notify}; empty when the key is not free or no one
     * waits for it.
     */
    Optional<HandOver> handOver(String tenant, long keyId, UUID taker, boolean notify) {
        return jdbc.sql(HAND_OVER).param("tenant", tenant).param("keyId", keyId).param("taker", taker)
                .param("offerSeconds", OFFER_SECONDS).param("channel", notify ? FreedKeys.CHANNEL : null)
                .query((rs, n) -> switch (rs.getString("outcome")) {
                    case "none" -> Optional.<HandOver>empty();
                    case "granted" -> Optional.<HandOver>of(new HandOver.Granted(atTime(rs, n)));
                    case "offered", "on_offer" -> Optional.<HandOver>of(new HandOver.Offered(
                            rs.getObject("id", UUID.class), rs.getString("owner"), rs.getString("holder"),
                            instant(rs, "expires_at"), instant(rs, "now"), rs.getString("outcome").equals("offered")));
                    default -> throw new IllegalStateException("lease_hand_over answered " + rs.getString("outcome")
                            + ", which it never answers");
                }).single();
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
        return jdbc.sql(QUEUE).params(asked(command, leaseTraceId, caller)).param("keyId", keyId)
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
                        throw contradiction("QUEUE", "waiting row " + waiterId + " of key " + keyId, "it wrote " + queued
                                + " rows" + (found == null ? "" : ", though the row it found was its request's"));
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

    private Map<String, Object> asked(AcquireCommand command, String leaseTraceId, Caller caller) {
        Map<String, Object> params = by(caller.subject(), caller);
        params.put("tenant", command.key().tenant());
        params.put("holder", command.holder());
        params.put("ttl", command.ttlSeconds());
        params.put("maxLifetime", command.maxLifetimeSeconds());
        params.put("lockDelay", command.lockDelaySeconds());
        params.put("jobId", command.jobId());
        params.put("leaseTraceId", leaseTraceId);
        params.put("metadata", json.writeValueAsString(command.metadata().values()));
        return params;
    }

    /**
     * A renew's transition, and when it changed the lease, {@code beat}: the fraction of the lease's TTL that
     * had passed since its previous renew or its grant (0.5: halfway to its expiry).
     */
    record Renewal(Call call, double beat) {
    }

    /** With the key locked; empty when the tenant has no such lease. */
    Optional<Transition> release(UUID leaseId, long fencingToken, Caller caller) {
        return end(leaseId, LeaseState.RELEASED, EventType.RELEASED, "released", fencingToken, Map.of(), caller);
    }

    /** With the key locked; empty when the tenant has no such lease. */
    Optional<Transition> revoke(UUID leaseId, String reason, Caller admin) {
        return end(leaseId, LeaseState.REVOKED, EventType.REVOKED, reason, null, Map.of("reason", reason), admin);
    }

    private Optional<Transition> end(UUID leaseId, LeaseState state, EventType event, String reason,
                                     Long fencingToken, Map<String, Object> details, Caller caller) {
        return jdbc.sql(END).params(onLease(leaseId, caller))
                .param("state", state.wireName())
                .param("eventType", event.name())
                .param("reason", reason)
                .param("fencingToken", fencingToken)
                .param("details", json.writeValueAsString(details))
                .query(this::written).optional()
                .map(ended -> requireTransition("END (" + state.wireName() + ")", "lease " + leaseId, ended));
    }

    /** With the key locked: records the expiry of the lease if it was active and due. */
    Expiry expire(UUID leaseId, String principal, Caller caller) {
        return jdbc.sql(EXPIRE).params(onLease(leaseId, caller)).param("principal", principal).query((rs, n) -> {
            long expired = rs.getLong("expired");
            requireCounts("EXPIRE", "lease " + leaseId, expired, rs.getLong("events"), rs.getLong("delays"),
                    rs.getLong("delays_due"));
            return new Expiry(expired == 1, instant(rs, "delayed_until"));
        }).single();
    }

    ActiveCounts activeCounts() {
        return jdbc.sql(ACTIVE_COUNTS).query((rs, n) -> new ActiveCounts(rs.getLong("active"), rs.getLong("unswept"),
                rs.getDouble("lag_seconds"))).single();
    }

    Optional<AtTime> currentOfKey(LeaseKey key) {
        return jdbc.sql(CURRENT_OF_KEY).params(keyParams(key)).query(this::atTime).optional();
    }

    /** Up to {@code limit + 1} rows: the one past the page tells whether another page follows. */
    List<AtTime> listPageAndOneMore(ListFilter f) {
        return jdbc.sql(LIST)
                .param("tenant", f.tenant())
                .param("program", f.program())
                .param("actor", f.actor())
                .param("targetType", f.targetType())
                .param("targetValue", f.targetValue())
                .param("operation", f.operation())
                .param("owner", f.owner())
                .param("holder", f.holder())
                .param("state", f.state())
                .param("before", f.before() == null ? null : f.before().fencingToken())
                .param("beforeId", f.before() == null ? null : f.before().leaseId())
                .param("limit", f.limit() + 1)
                .query(this::atTime).list();
    }

    /** Who makes a transition, and in which request: written to its audit event. */
    private static Map<String, Object> by(String principal, Caller caller) {
        var params = new HashMap<String, Object>();
        params.put("principal", principal);
        params.put("requestId", caller.requestId());
        params.put("traceId", caller.traceId());
        return params;
    }

    private static Map<String, Object> onLease(UUID leaseId, Caller caller) {
        Map<String, Object> params = by(caller.subject(), caller);
        params.put("leaseId", leaseId);
        params.put("tenant", caller.tenant());
        return params;
    }

    private static Map<String, Object> keyParams(LeaseKey key) {
        var params = new HashMap<String, Object>();
        params.put("tenant", key.tenant());
        params.put("program", key.program());
        params.put("targetType", key.target().type().wireName());
        params.put("targetValue", key.target().value());
        params.put("actor", key.actor());
        params.put("operation", key.operation());
        return params;
    }

    private static KeyLock keyLock(ResultSet rs, int row) throws SQLException {
        return new KeyLock(rs.getString("tenant"), rs.getLong("id"), instant(rs, "now"), instant(rs, "delayed_until"), rs.getBoolean("watched"));
    }

    private AtTime atTime(ResultSet rs, int row) throws SQLException {
        return new AtTime(instant(rs, "now"), lease(rs, row));
    }

    private Transition transition(ResultSet rs, int row) throws SQLException {
        return new Transition(instant(rs, "now"), rs.getBoolean("changed"), lease(rs, row));
    }

    /** A transition, and what its statement wrote besides the lease: for {@link #requireTransition}. */
    private record Written(Transition transition, long events, long delays, long delaysDue) {
    }

    private Written written(ResultSet rs, int row) throws SQLException {
        return new Written(transition(rs, row), rs.getLong("events"), rs.getLong("delays"), rs.getLong("delays_due"));
    }

    /**
     * Post-state validation of a transition statement: a changed lease has exactly its one audit event and the
     * lock-delay it starts; otherwise the statement contradicted itself (a trigger, a rule or a bug swallowed a
     * write) and the transaction must not commit half of it.
     */
    private static Transition requireTransition(String statement, String subject, Written written) {
        if (written.transition().changed()) {
            requireCounts(statement, subject + " (" + written.transition().lease().id() + ")", 1, written.events(),
                    written.delays(), written.delaysDue());
        }
        return written.transition();
    }

    /**
     * A statement that locked (or holds the key's lock on) the rows it found to write wrote every one of them:
     * none could change or go meanwhile, so fewer means a write was swallowed.
     */
    private static void requireWritten(String statement, String subject, long found, long written) {
        if (written != found) {
            throw contradiction(statement, subject, "it found " + found + " rows to write under their lock but wrote "
                    + written);
        }
    }

    /** Every lease a statement changed has its one event, and every lock-delay it should start was written. */
    private static void requireCounts(String statement, String subject, long changed, long events, long delays,
                                      long delaysDue) {
        if (events != changed || delays != delaysDue) {
            throw contradiction(statement, subject, "it changed " + changed + " leases but wrote " + events
                    + " events and " + delays + " of " + delaysDue + " lock-delays");
        }
    }

    /**
     * A statement whose row count or returned state contradicts what it assumed: an error, never a silent
     * success. Thrown inside the operation's transaction, it rolls everything back; the request is answered
     * 500 INTERNAL_ERROR and logged with this message ({@code ApiProblems}), a sweeper batch fails its run.
     */
    static IllegalStateException contradiction(String statement, String subject, String detail) {
        return new IllegalStateException("LeaseStore." + statement + " on " + subject + ": " + detail
                + " (its row counts contradict what it assumed; rolled back)");
    }

    private Lease lease(ResultSet rs, int row) throws SQLException {
        LeaseKey key = new LeaseKey(
                rs.getString("tenant"),
                rs.getString("program"),
                new Target(TargetType.parse(rs.getString("target_type")), rs.getString("target_value")),
                rs.getString("actor"),
                rs.getString("operation"));
        return new Lease(
                rs.getObject("id", UUID.class),
                key,
                rs.getString("owner"),
                rs.getString("holder"),
                rs.getLong("fencing_token"),
                LeaseState.fromWireName(rs.getString("state")),
                instant(rs, "acquired_at"),
                instant(rs, "renewed_at"),
                instant(rs, "expires_at"),
                instant(rs, "max_expires_at"),
                instant(rs, "ended_at"),
                rs.getString("end_reason"),
                rs.getInt("ttl_seconds"),
                rs.getInt("max_lifetime_seconds"),
                rs.getInt("lock_delay_seconds"),
                rs.getString("job_id"),
                rs.getString("trace_id"),
                new Metadata(json.readValue(rs.getString("metadata"), JSON_OBJECT)));
    }

    private static Instant instant(ResultSet rs, String column) throws SQLException {
        OffsetDateTime value = rs.getObject(column, OffsetDateTime.class);
        return value == null ? null : value.toInstant();
    }
}
