package io.leasekeeper.lease;

import static io.leasekeeper.lease.LeaseRows.instant;
import static io.leasekeeper.lease.LeaseRows.keyParams;

import io.leasekeeper.config.LeasekeeperProperties;
import io.leasekeeper.idempotency.IdempotencyStore;
import io.leasekeeper.security.Caller;
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
 * The lease transitions: each one function of the database ({@code db/migration/R__*.sql}), called here in one round
 * trip (the reads are {@link LeaseReads}, a watch's mark {@link WatchMarks}). Time is always PostgreSQL's, read after
 * the key's row lock is held.
 */
@Component
class LeaseStore {

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
     * The transitions, each one function of the database, whole in its repeatable migration (R__grant_and_acquire.sql,
     * R__renew_and_release.sql, R__waiter_queue.sql), that locks the key, decides at the time read after the lock and
     * writes the transition with its audit event; a write swallowed raises SQLSTATE LK001 and rolls the call back. The
     * service calls each in one round trip, in autocommit (or inside an Idempotency-Key's claim).
     */

    /**
     * Every acquire (lease_acquire): the tenant, and the request as one lease_acquire_request row, so that a batch of
     * the tenant's acquires is an array of such rows.
     */
    private static final String ACQUIRE = """
            SELECT (a.answer).*, a.offered, a.expired
            FROM lease_acquire(:tenant,
                    ROW(:program, :targetType, :targetValue, :actor, CAST(:operation AS text), :principal, :holder,
                        :ttl, :maxLifetime, :lockDelay, CAST(:jobId AS text), CAST(:leaseTraceId AS text),
                        CAST(:metadata AS jsonb), CAST(:requestId AS text), CAST(:traceId AS text), :mayGrant,
                        CAST(:waiter AS uuid), :try, :waitSeconds, CAST(:idempotencyKey AS text),
                        CAST(:fingerprint AS text))::lease_acquire_request,
                    :offerSeconds, CAST(:channel AS text), :watchHorizon) a
            """;

    /** A waiting acquire whose client has gone leaves its key's queue; the row the key then went to, if any. */
    private static final String LEAVE_QUEUE = """
            SELECT lease_leave_queue(:tenant, :waiter, :offerSeconds, CAST(:channel AS text)) AS offered
            """;

    /** A renew (lease_renew): the tenant, and the request as one lease_renew_request row. */
    private static final String RENEW_CALL = """
            SELECT * FROM lease_renew(:tenant, ROW(:leaseId, :principal, :fencingToken, CAST(:ttl AS integer),
                                                   CAST(:requestId AS text), CAST(:traceId AS text))::lease_renew_request)
            """;

    /**
     * A release or a revoke (lease_end): the tenant, and the request as one lease_end_request row; lease_end's answer,
     * and the waiting request it offered the freed key to (null: none).
     */
    private static final String END_CALL = """
            SELECT (e.answer).*, e.offered
            FROM lease_end(:tenant, ROW(:leaseId, :state, :principal, CAST(:fencingToken AS bigint),
                                        CAST(:reason AS text), CAST(:requestId AS text),
                                        CAST(:traceId AS text))::lease_end_request,
                           :offerSeconds, CAST(:channel AS text)) e
            """;

    /**
     * How long an offer of a key keeps it for the waiting row it was made to: long enough for the request to wake,
     * take a slot (at most {@code leasekeeper.limits.queue-timeout}, 2 s by default) and take the key; and how long a
     * key stays with a waiter whose instance stopped before its offer passes on.
     */
    static final int OFFER_SECONDS = 5;

    private final JdbcClient jdbc;
    private final JsonMapper json;
    private final LeaseRows rows;
    /** The channel transitions notify freed and offered keys on ({@link FreedKeys}); null when notifications are off. */
    private final String channel;
    /** How far ahead a waiting acquire's mark on its key reaches ({@link WatchMarks#horizon}). */
    private final int watchHorizon;

    LeaseStore(JdbcClient jdbc, JsonMapper json, LeaseRows rows, LeasekeeperProperties properties) {
        this.jdbc = jdbc;
        this.json = json;
        this.rows = rows;
        this.channel = properties.waiting().notifications() ? FreedKeys.CHANNEL : null;
        this.watchHorizon = WatchMarks.horizon(properties);
    }

    /** The outcomes the functions answer, by their names there in lower case. */
    enum Outcome {
        GRANTED, HELD, DELAYED, OVER_QUOTA, KEY_REUSED, RENEWED, RELEASED, REVOKED, UNCHANGED, NOT_FOUND;

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

    /** Which try of an acquire a call is: its function's {@code r.try}. */
    enum Try {
        /** An acquire that does not wait. */
        ONCE,
        /** A waiting acquire's first: a busy key queues its row. */
        FIRST,
        /** A queued waiting acquire's later try. */
        AGAIN,
        /** A queued waiting acquire's try at its deadline: its row leaves the queue. */
        LAST
    }

    /**
     * What an acquire answered at {@code now}: the granted lease (null unless {@code GRANTED}); for a busy key its
     * owner, holder and the end of the hold ({@code HELD}: the lease's expiry, or the end of an offer to a waiting
     * request) or of its lock-delay ({@code delayedUntil}); the waiting request the key was offered to (null: none);
     * and how many leases past their TTL the call recorded as expired.
     */
    record Acquired(Outcome outcome, Instant now, long keyId, Lease lease, String owner, String holder,
                    Instant expiresAt, Instant delayedUntil, UUID offered, int expired) {
    }

    /**
     * Every acquire in one call (lease_acquire): a waiting acquire's tries name its queue row {@code waiterId} and,
     * for the first, its Idempotency-Key ({@code idempotency}, null: none); {@code mayGrant} false when the tenant is
     * at its quota.
     */
    Acquired acquire(AcquireCommand command, Caller caller, boolean mayGrant, Try attempt, UUID waiterId,
                     IdempotencyStore.Request idempotency) {
        return jdbc.sql(ACQUIRE).params(keyParams(command.key()))
                .param("principal", caller.subject()).param("holder", command.holder())
                .param("ttl", command.ttlSeconds()).param("maxLifetime", command.maxLifetimeSeconds())
                .param("lockDelay", command.lockDelaySeconds()).param("jobId", command.jobId())
                // a lease names the trace it was taken in: the client's traceId, else the request's own trace
                .param("leaseTraceId", command.traceId() != null ? command.traceId() : caller.traceId())
                .param("metadata", json.writeValueAsString(command.metadata().values()))
                .param("requestId", caller.requestId()).param("traceId", caller.traceId())
                .param("mayGrant", mayGrant).param("waiter", waiterId)
                .param("try", attempt.name().toLowerCase(java.util.Locale.ROOT))
                .param("waitSeconds", command.waitSeconds())
                .param("idempotencyKey", idempotency == null ? null : idempotency.key())
                .param("fingerprint", idempotency == null ? null : idempotency.fingerprint())
                .param("offerSeconds", OFFER_SECONDS).param("channel", channel).param("watchHorizon", watchHorizon)
                .query((rs, n) -> {
                    Outcome outcome = Outcome.of(rs.getString("outcome"));
                    return new Acquired(outcome, instant(rs, "now"), rs.getLong("key_id"),
                            outcome == Outcome.GRANTED ? rows.lease(rs, n) : null, rs.getString("owner"),
                            rs.getString("holder"), instant(rs, "expires_at"), instant(rs, "delayed_until"),
                            rs.getObject("offered", UUID.class), rs.getInt("expired"));
                })
                .single();
    }

    /**
     * A waiting acquire whose client has gone leaves its key's queue (lease_leave_queue): the key, if offered to its
     * row, goes on. Returns the waiting request the key was offered to next (null: none).
     */
    UUID leaveQueue(String tenant, UUID waiterId) {
        return jdbc.sql(LEAVE_QUEUE).param("tenant", tenant).param("waiter", waiterId)
                .param("offerSeconds", OFFER_SECONDS).param("channel", channel)
                .query((rs, n) -> rs.getObject("offered", UUID.class)).list().getFirst(); // one row, maybe null
    }

    /** A renew's one call: 'renewed' with its beat, or 'unchanged'; empty when the tenant has no such lease. */
    Optional<Renewal> renew(UUID leaseId, long fencingToken, Integer ttlSeconds, Caller caller) {
        return jdbc.sql(RENEW_CALL).params(onLease(leaseId, caller)).param("fencingToken", fencingToken)
                .param("ttl", ttlSeconds)
                .query((rs, n) -> new Renewal(call(rs, n), rs.getDouble("beat"))).optional()
                .filter(renewal -> renewal.call().outcome() != Outcome.NOT_FOUND);
    }

    /**
     * A renew's transition, and when it changed the lease, {@code beat}: the fraction of the lease's TTL that
     * had passed since its previous renew or its grant (0.5: halfway to its expiry).
     */
    record Renewal(Call call, double beat) {
    }

    /** What a release or a revoke answered, and the waiting request its key was offered to (null: none). */
    record Ended(Call call, UUID offered) {
    }

    /**
     * Ends the lease in one call (lease_end): released by its owner with {@code fencingToken}, or revoked with
     * {@code reason} (the token null). Empty when the tenant has no such lease.
     */
    Optional<Ended> end(UUID leaseId, LeaseState state, Long fencingToken, String reason, Caller caller) {
        return jdbc.sql(END_CALL).params(onLease(leaseId, caller)).param("state", state.wireName())
                .param("fencingToken", fencingToken).param("reason", reason)
                .param("offerSeconds", OFFER_SECONDS).param("channel", channel)
                .query((rs, n) -> new Ended(call(rs, n), rs.getObject("offered", UUID.class))).optional()
                .filter(ended -> ended.call().outcome() != Outcome.NOT_FOUND);
    }

    private Call call(ResultSet rs, int row) throws SQLException {
        return new Call(Outcome.of(rs.getString("outcome")), instant(rs, "now"),
                rs.getObject("id") == null ? null : rows.lease(rs, row));
    }

    private static Map<String, Object> onLease(UUID leaseId, Caller caller) {
        Map<String, Object> params = LeaseRows.by(caller.subject(), caller);
        params.put("leaseId", leaseId);
        params.put("tenant", caller.tenant());
        return params;
    }
}
