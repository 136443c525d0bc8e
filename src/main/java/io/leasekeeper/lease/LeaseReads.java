package io.leasekeeper.lease;

import io.leasekeeper.key.LeaseKey;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

/**
 * The lease feature's reads: a lease by id, a key's active lease, a page of the list, and the gauges' counts. Each is
 * one statement, confined to its tenant (but the gauges'), with the lease's effective state decided by the database's
 * clock in the same statement ({@code lease_now()}). Reads take no lock and change nothing.
 */
@Component
class LeaseReads {

    private static final String BY_ID = """
            SELECT lease_now() AS now, %s
            FROM lease l JOIN lease_key k ON k.tenant = :tenant AND k.id = l.key_id
            WHERE l.tenant = :tenant AND l.id = :leaseId
            """.formatted(LeaseRows.COLUMNS);

    static final String CURRENT_OF_KEY = """
            SELECT lease_now() AS now, %s
            FROM lease_key k
            CROSS JOIN LATERAL (SELECT * FROM lease WHERE tenant = :tenant AND key_id = k.id
                                ORDER BY fencing_token DESC LIMIT 1) l
            WHERE k.tenant = :tenant AND k.program = :program AND k.target_type = :targetType
              AND k.target_value = :targetValue AND k.actor = :actor
              AND k.operation IS NOT DISTINCT FROM CAST(:operation AS text)
              AND l.state = 'active' AND l.expires_at > lease_now()
            """.formatted(LeaseRows.COLUMNS);

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
            """.formatted(LeaseRows.COLUMNS);

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
    private final LeaseRows rows;

    LeaseReads(JdbcClient jdbc, LeaseRows rows) {
        this.jdbc = jdbc;
        this.rows = rows;
    }

    Optional<LeaseRead> byId(UUID leaseId, String tenant) {
        return jdbc.sql(BY_ID).param("leaseId", leaseId).param("tenant", tenant).query(rows::read).optional();
    }

    Optional<LeaseRead> currentOfKey(LeaseKey key) {
        return jdbc.sql(CURRENT_OF_KEY).params(LeaseRows.keyParams(key)).query(rows::read).optional();
    }

    /** Up to {@code limit + 1} rows: the one past the page tells whether another page follows. */
    List<LeaseRead> listPageAndOneMore(ListFilter f) {
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
                .query(rows::read).list();
    }

    ActiveCounts activeCounts() {
        return jdbc.sql(ACTIVE_COUNTS).query((rs, n) -> new ActiveCounts(rs.getLong("active"), rs.getLong("unswept"),
                rs.getDouble("lag_seconds"))).single();
    }
}
