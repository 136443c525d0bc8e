package io.leasekeeper.lease;

import static io.leasekeeper.lease.LeaseRows.instant;
import static io.leasekeeper.lease.LeaseRows.keyParams;

import io.leasekeeper.security.Caller;
import io.leasekeeper.key.LeaseKey;
import io.leasekeeper.wait.FreedKeys;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;
import tools.jackson.databind.json.JsonMapper;

/**
 * The lease transitions' SQL (the reads are {@link LeaseReads}, the waiting requests' marks and queue
 * {@link WaiterQueue}). Time is always PostgreSQL's, read after the key's row lock is held. The 1.0 acquire, the
 * renew and the release are functions of the database ({@code db/migration/R__*.sql}), called here in one round
 * trip; the locking path's statements are below, each named, and each that changes a lease also writes its audit
 * event in the same statement.
 */
@Component
class LeaseStore {

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

    /** A release or a revoke: lease_end's answer, and the waiting request it offered the freed key to (null: none). */
    private static final String END_CALL = """
            SELECT (e.answer).*, e.offered
            FROM lease_end(:tenant, :leaseId, :state, :principal, CAST(:fencingToken AS bigint), CAST(:reason AS text),
                           CAST(:requestId AS text), CAST(:traceId AS text), :offerSeconds, CAST(:channel AS text)) e
            """;

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

    /**
     * A key's row, locked until the transaction ends at {@code now}: its tenant and id, the end of its lock-delay
     * when that has not passed (else null; not read by the lock of a lease's key), and whether a request waits for it.
     */
    record KeyLock(String tenant, long id, Instant now, Instant delayedUntil, boolean watched) {
    }

    /** What a hand-over did with a free key: granted it to the calling waiter, or offered it to a row. */
    sealed interface HandOver {

        /** The calling waiting request's row was the first: the key is granted to it, and its row is gone. */
        record Granted(LeaseRead lease) implements HandOver {
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

    private final JdbcClient jdbc;
    private final JsonMapper json;
    private final LeaseRows rows;

    LeaseStore(JdbcClient jdbc, JsonMapper json, LeaseRows rows) {
        this.jdbc = jdbc;
        this.json = json;
        this.rows = rows;
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

    /** The outcomes the functions answer, by their names there in lower case. */
    enum Outcome {
        GRANTED, HELD, DELAYED, RENEWED, RELEASED, REVOKED, UNCHANGED, LOCKED_PATH, NOT_FOUND;

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
        return jdbc.sql(ACQUIRE).params(keyParams(command.key())).params(rows.asked(command, leaseTraceId, caller))
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

    /** What a release or a revoke answered, and the waiting request its key was offered to (null: none). */
    record Ended(Call call, UUID offered) {
    }

    /**
     * Ends the lease in one call (lease_end): released by its owner with {@code fencingToken}, or revoked with
     * {@code reason} (the token null). Its waiters are notified on the freed keys' channel when {@code notify}. Empty
     * when the tenant has no such lease.
     */
    Optional<Ended> end(UUID leaseId, LeaseState state, Long fencingToken, String reason, Caller caller,
                        boolean notify) {
        return jdbc.sql(END_CALL).params(onLease(leaseId, caller)).param("state", state.wireName())
                .param("fencingToken", fencingToken).param("reason", reason)
                .param("offerSeconds", OFFER_SECONDS).param("channel", notify ? FreedKeys.CHANNEL : null)
                .query((rs, n) -> new Ended(call(rs, n), rs.getObject("offered", UUID.class))).optional()
                .filter(ended -> ended.call().outcome() != Outcome.NOT_FOUND);
    }

    private Call call(ResultSet rs, int row) throws SQLException {
        return new Call(Outcome.of(rs.getString("outcome")), instant(rs, "now"),
                rs.getObject("id") == null ? null : rows.lease(rs, row));
    }

    /** With the key locked: 'granted', or 'unchanged' with the key's active lease, maybe past its expiry. */
    Call acquireIfFree(long keyId, AcquireCommand command, String leaseTraceId, Caller caller) {
        return jdbc.sql(ACQUIRE_IF_FREE).params(rows.asked(command, leaseTraceId, caller)).param("keyId", keyId)
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
                    case "granted" -> Optional.<HandOver>of(new HandOver.Granted(rows.read(rs, n)));
                    case "offered", "on_offer" -> Optional.<HandOver>of(new HandOver.Offered(
                            rs.getObject("id", UUID.class), rs.getString("owner"), rs.getString("holder"),
                            instant(rs, "expires_at"), instant(rs, "now"), rs.getString("outcome").equals("offered")));
                    default -> throw new IllegalStateException("lease_hand_over answered " + rs.getString("outcome")
                            + ", which it never answers");
                }).single();
    }

    /**
     * A renew's transition, and when it changed the lease, {@code beat}: the fraction of the lease's TTL that
     * had passed since its previous renew or its grant (0.5: halfway to its expiry).
     */
    record Renewal(Call call, double beat) {
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

    private static Map<String, Object> onLease(UUID leaseId, Caller caller) {
        Map<String, Object> params = LeaseRows.by(caller.subject(), caller);
        params.put("leaseId", leaseId);
        params.put("tenant", caller.tenant());
        return params;
    }

    private static KeyLock keyLock(ResultSet rs, int row) throws SQLException {
        return new KeyLock(rs.getString("tenant"), rs.getLong("id"), instant(rs, "now"), instant(rs, "delayed_until"), rs.getBoolean("watched"));
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
        return contradictionIn("LeaseStore", statement, subject, detail);
    }

    /** The same for a statement of another class of this feature ({@code owner}). */
    static IllegalStateException contradictionIn(String owner, String statement, String subject, String detail) {
        return new IllegalStateException(owner + "." + statement + " on " + subject + ": " + detail
                + " (its row counts contradict what it assumed; rolled back)");
    }

}
