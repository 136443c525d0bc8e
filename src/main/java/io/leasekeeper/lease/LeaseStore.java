package io.leasekeeper.lease;

import io.leasekeeper.target.LeaseKey;
import io.leasekeeper.target.Target;
import io.leasekeeper.target.TargetType;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * All SQL of the lease feature, and nothing else. Time is always PostgreSQL's ({@code lease_now()});
 * statements that decide on expiry run after the key's row lock is held.
 */
@Component
class LeaseStore {

    private static final String COLUMNS = """
            l.id, l.owner, l.holder, l.fencing_token, l.state, l.acquired_at, l.renewed_at, l.expires_at,
            l.max_expires_at, l.ended_at, l.end_reason, l.ttl_seconds, l.max_lifetime_seconds,
            l.job_id, l.trace_id, l.metadata,
            k.tenant, k.program, k.target_type, k.target_value, k.actor, k.operation""";

    private static final String INSERT_KEY_IF_ABSENT = """
            INSERT INTO lease_key (tenant, program, target_type, target_value, actor, operation)
            VALUES (:tenant, :program, :targetType, :targetValue, :actor, :operation)
            ON CONFLICT DO NOTHING
            """;

    private static final String LOCK_KEY = """
            SELECT id FROM lease_key
            WHERE tenant = :tenant AND program = :program AND target_type = :targetType
              AND target_value = :targetValue AND actor = :actor
              AND operation IS NOT DISTINCT FROM CAST(:operation AS text)
            FOR UPDATE
            """;

    private static final String LOCK_KEY_OF_LEASE = """
            SELECT k.id FROM lease_key k
            JOIN lease l ON l.key_id = k.id
            WHERE l.id = :leaseId AND l.tenant = :tenant
            FOR UPDATE OF k
            """;

    /** Run with the key locked: the active row of the key (if any) and the time of the decision. */
    private static final String ACTIVE_OF_KEY = """
            SELECT clock.now, %s
            FROM (SELECT lease_now() AS now) AS clock
            LEFT JOIN lease l ON l.key_id = :keyId AND l.state = 'active'
            LEFT JOIN lease_key k ON k.id = l.key_id
            """.formatted(COLUMNS);

    private static final String BY_ID = """
            SELECT lease_now() AS now, %s
            FROM lease l JOIN lease_key k ON k.id = l.key_id
            WHERE l.id = :leaseId AND l.tenant = :tenant
            """.formatted(COLUMNS);

    private static final String INSERT_ACTIVE = """
            WITH l AS (
                INSERT INTO lease (id, key_id, tenant, owner, holder, fencing_token, state,
                                   acquired_at, expires_at, max_expires_at, ttl_seconds, max_lifetime_seconds,
                                   job_id, trace_id, metadata)
                VALUES (gen_random_uuid(), :keyId, :tenant, :owner, :holder, nextval('fencing_token_seq'), 'active',
                        CAST(:now AS timestamptz),
                        CAST(:now AS timestamptz) + make_interval(secs => LEAST(:ttl, :maxLifetime)),
                        CAST(:now AS timestamptz) + make_interval(secs => :maxLifetime),
                        :ttl, :maxLifetime, :jobId, :traceId, CAST(:metadata AS jsonb))
                RETURNING *
            )
            SELECT %s FROM l JOIN lease_key k ON k.id = l.key_id
            """.formatted(COLUMNS);

    private static final String RENEW = """
            UPDATE lease l
            SET renewed_at = CAST(:now AS timestamptz),
                ttl_seconds = :ttl,
                expires_at = LEAST(CAST(:now AS timestamptz) + make_interval(secs => :ttl), l.max_expires_at)
            FROM lease_key k
            WHERE k.id = l.key_id AND l.id = :leaseId
              AND l.state = 'active' AND l.expires_at > CAST(:now AS timestamptz)
            RETURNING %s
            """.formatted(COLUMNS);

    /** Ends an active, unexpired lease: released by its owner or revoked by an admin. */
    private static final String END = """
            UPDATE lease l
            SET state = :state, ended_at = CAST(:now AS timestamptz), end_reason = :reason
            FROM lease_key k
            WHERE k.id = l.key_id AND l.id = :leaseId
              AND l.state = 'active' AND l.expires_at > CAST(:now AS timestamptz)
            RETURNING %s
            """.formatted(COLUMNS);

    /** Records the expiry of a lease whose TTL has passed, as of its expiry instant. */
    private static final String EXPIRE = """
            UPDATE lease SET state = 'expired', ended_at = expires_at, end_reason = 'expired'
            WHERE id = :leaseId AND state = 'active' AND expires_at <= CAST(:now AS timestamptz)
            """;

    /**
     * One sweeper batch, one statement. {@code due_keys} locks the keys whose active lease is due,
     * skipping keys another transaction holds (an acquire, renew, release or another sweeper working on
     * them); the limit applies after locking, so concurrent sweepers take disjoint batches. The UPDATE
     * then expires only leases still active and due: a lease that a transaction committed since this
     * statement's snapshot has changed (renewed, released, expired by an acquire) is re-read by
     * PostgreSQL at its newest version and re-checked, so it is left alone. Each expired lease gets its
     * EXPIRED event in the same statement, as {@code AuditLog} would write it: principal
     * {@code system:sweeper}, {@code details.expiresAt} as RFC 3339 with milliseconds.
     */
    private static final String EXPIRE_DUE = """
            WITH due_keys AS (
                SELECT k.id
                FROM lease l JOIN lease_key k ON k.id = l.key_id
                WHERE l.state = 'active' AND l.expires_at <= lease_now()
                ORDER BY l.expires_at
                LIMIT :batchSize
                FOR UPDATE OF k SKIP LOCKED
            ), expired AS (
                UPDATE lease l SET state = 'expired', ended_at = l.expires_at, end_reason = 'expired'
                FROM due_keys d
                WHERE l.key_id = d.id AND l.state = 'active' AND l.expires_at <= lease_now()
                RETURNING l.id, l.fencing_token, l.expires_at
            )
            INSERT INTO lease_event (lease_id, type, from_state, to_state, fencing_token, at, principal, details)
            SELECT id, 'EXPIRED', 'active', 'expired', fencing_token, lease_now(), :principal,
                   jsonb_build_object('expiresAt', to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
            FROM expired
            """;

    private static final String CURRENT_OF_KEY = """
            SELECT lease_now() AS now, %s
            FROM lease l JOIN lease_key k ON k.id = l.key_id
            WHERE k.tenant = :tenant AND k.program = :program AND k.target_type = :targetType
              AND k.target_value = :targetValue AND k.actor = :actor
              AND k.operation IS NOT DISTINCT FROM CAST(:operation AS text)
              AND l.state = 'active' AND l.expires_at > lease_now()
            """.formatted(COLUMNS);

    /** Newest first, keyset-paginated on the fencing token; the state filter is the effective state. */
    private static final String LIST = """
            SELECT lease_now() AS now, %s
            FROM lease l JOIN lease_key k ON k.id = l.key_id
            WHERE l.tenant = :tenant
              AND (CAST(:program AS text) IS NULL OR k.program = :program)
              AND (CAST(:actor AS text) IS NULL OR k.actor = :actor)
              AND (CAST(:targetType AS text) IS NULL OR k.target_type = :targetType)
              AND (CAST(:targetValue AS text) IS NULL OR k.target_value = :targetValue)
              AND (CAST(:owner AS text) IS NULL OR l.owner = :owner)
              AND (CAST(:holder AS text) IS NULL OR l.holder = :holder)
              AND (CAST(:state AS text) IS NULL OR
                   CASE WHEN l.state = 'active' AND l.expires_at <= lease_now() THEN 'expired'
                        ELSE l.state END = :state)
              AND (CAST(:before AS bigint) IS NULL OR l.fencing_token < :before)
            ORDER BY l.fencing_token DESC
            LIMIT :limit
            """.formatted(COLUMNS);

    /**
     * The leases marked active: still within their TTL, past it but not yet swept, and how long ago the
     * oldest unswept one expired (the sweeper's lag), all by the database's clock. One scan of the
     * active rows; run at a bounded rate, never per scrape.
     */
    private static final String ACTIVE_COUNTS = """
            SELECT count(*) FILTER (WHERE expires_at > lease_now()) AS active,
                   count(*) FILTER (WHERE expires_at <= lease_now()) AS unswept,
                   coalesce(extract(epoch FROM lease_now() - min(expires_at) FILTER (WHERE expires_at <= lease_now())), 0)
                       AS lag_seconds
            FROM lease WHERE state = 'active'
            """;

    private static final TypeReference<Map<String, Object>> JSON_OBJECT = new TypeReference<>() {
    };

    /** A lease as read at {@code now}, the database time of the statement that read it. */
    record AtTime(Instant now, Lease lease) {
    }

    record ListFilter(String tenant, String program, String actor, String targetType, String targetValue,
                      String owner, String holder, String state, Long beforeToken, int limit) {
    }

    private final JdbcClient jdbc;
    private final JsonMapper json;

    LeaseStore(JdbcClient jdbc, JsonMapper json) {
        this.jdbc = jdbc;
        this.json = json;
    }

    /** Creates the key's row if it is new, then locks it until the transaction ends. */
    long lockKey(LeaseKey key) {
        jdbc.sql(INSERT_KEY_IF_ABSENT).params(keyParams(key)).update();
        return jdbc.sql(LOCK_KEY).params(keyParams(key)).query(Long.class).single();
    }

    /** Locks the key of a lease of this tenant; empty when there is no such lease. */
    Optional<Long> lockKeyOfLease(UUID leaseId, String tenant) {
        return jdbc.sql(LOCK_KEY_OF_LEASE).param("leaseId", leaseId).param("tenant", tenant)
                .query(Long.class).optional();
    }

    /** The key's active row (possibly past its expiry), if any, and the database time. */
    AtTime activeOfKey(long keyId) {
        return jdbc.sql(ACTIVE_OF_KEY).param("keyId", keyId).query(this::atTimeOrEmpty).single();
    }

    Optional<AtTime> byId(UUID leaseId, String tenant) {
        return jdbc.sql(BY_ID).param("leaseId", leaseId).param("tenant", tenant).query(this::atTime).optional();
    }

    Lease insertActive(long keyId, LeaseKey key, String owner, String holder, Instant now, int ttlSeconds,
                       int maxLifetimeSeconds, String jobId, String traceId, Metadata metadata) {
        return jdbc.sql(INSERT_ACTIVE)
                .param("keyId", keyId)
                .param("tenant", key.tenant())
                .param("owner", owner)
                .param("holder", holder)
                .param("now", utc(now))
                .param("ttl", ttlSeconds)
                .param("maxLifetime", maxLifetimeSeconds)
                .param("jobId", jobId)
                .param("traceId", traceId)
                .param("metadata", json.writeValueAsString(metadata.values()))
                .query(this::lease).single();
    }

    /** Empty when the lease was not active and unexpired at {@code now}: nothing was changed. */
    Optional<Lease> renew(UUID leaseId, Instant now, int ttlSeconds) {
        return jdbc.sql(RENEW).param("leaseId", leaseId).param("now", utc(now)).param("ttl", ttlSeconds)
                .query(this::lease).optional();
    }

    /** Empty when the lease was not active and unexpired at {@code now}: nothing was changed. */
    Optional<Lease> end(UUID leaseId, Instant now, LeaseState state, String reason) {
        return jdbc.sql(END).param("leaseId", leaseId).param("now", utc(now))
                .param("state", state.wireName()).param("reason", reason)
                .query(this::lease).optional();
    }

    /** True when the lease was active and due at {@code now} and is now recorded as expired. */
    boolean expire(UUID leaseId, Instant now) {
        return jdbc.sql(EXPIRE).param("leaseId", leaseId).param("now", utc(now)).update() == 1;
    }

    ActiveCounts activeCounts() {
        return jdbc.sql(ACTIVE_COUNTS).query((rs, n) -> new ActiveCounts(rs.getLong("active"), rs.getLong("unswept"),
                rs.getDouble("lag_seconds"))).single();
    }

    /** Expires up to {@code batchSize} due leases with their events; returns how many. */
    int expireDue(int batchSize, String principal) {
        return jdbc.sql(EXPIRE_DUE).param("batchSize", batchSize).param("principal", principal).update();
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
                .param("owner", f.owner())
                .param("holder", f.holder())
                .param("state", f.state())
                .param("before", f.beforeToken())
                .param("limit", f.limit() + 1)
                .query(this::atTime).list();
    }

    private static Map<String, Object> keyParams(LeaseKey key) {
        var params = new java.util.HashMap<String, Object>();
        params.put("tenant", key.tenant());
        params.put("program", key.program());
        params.put("targetType", key.target().type().wireName());
        params.put("targetValue", key.target().value());
        params.put("actor", key.actor());
        params.put("operation", key.operation());
        return params;
    }

    private AtTime atTime(ResultSet rs, int row) throws SQLException {
        return new AtTime(instant(rs, "now"), lease(rs, row));
    }

    private AtTime atTimeOrEmpty(ResultSet rs, int row) throws SQLException {
        return new AtTime(instant(rs, "now"), rs.getObject("id") == null ? null : lease(rs, row));
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
                rs.getString("job_id"),
                rs.getString("trace_id"),
                new Metadata(json.readValue(rs.getString("metadata"), JSON_OBJECT)));
    }

    private static Instant instant(ResultSet rs, String column) throws SQLException {
        OffsetDateTime value = rs.getObject(column, OffsetDateTime.class);
        return value == null ? null : value.toInstant();
    }

    private static OffsetDateTime utc(Instant instant) {
        return OffsetDateTime.ofInstant(instant, ZoneOffset.UTC);
    }
}
