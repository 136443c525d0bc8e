package io.leasekeeper.sweeper;

import io.leasekeeper.config.LeasekeeperProperties;
import io.leasekeeper.wait.FreedKeys;
import java.util.List;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/**
 * All SQL of the sweeper: which tenants have due leases, one batch of one tenant's (the function
 * {@code lease_expire_due}, db/migration/R__expiry.sql, one call in autocommit), and the queue
 * rows of waiting acquires that never answered.
 */
@Component
class SweeperStore {

    /**
     * The tenants that have a due lease, in tenant order after {@code :after} (null: from the first), at most
     * {@code :limit}: the sweeper's one statement across tenants, a read. It skips from tenant to tenant along
     * lease_due (tenant, expires_at), one probe of the index for each tenant with active leases and one for
     * whether its earliest expiry is due, so its cost follows the tenants with active leases, not the leases.
     */
    static final String DUE_TENANTS = """
            -- Across tenants: the sweeper's search for the tenants it sweeps, a read.
            WITH RECURSIVE tenants AS (
                (SELECT tenant FROM lease
                 WHERE state = 'active' AND (CAST(:after AS text) IS NULL OR tenant > :after)
                 ORDER BY tenant LIMIT 1)
                UNION ALL
                SELECT (SELECT l.tenant FROM lease l
                        WHERE l.state = 'active' AND l.tenant > t.tenant
                        ORDER BY l.tenant LIMIT 1)
                FROM tenants t WHERE t.tenant IS NOT NULL
            )
            SELECT t.tenant FROM tenants t
            WHERE t.tenant IS NOT NULL
              AND EXISTS (SELECT 1 FROM lease l
                          WHERE l.tenant = t.tenant AND l.state = 'active' AND l.expires_at <= lease_now())
            LIMIT :limit
            """;

    /** One batch of one tenant; notifies the waiters of the keys it frees on the channel (null: not at all). */
    static final String EXPIRE_DUE = "SELECT lease_expire_due(:tenant, :batchSize, CAST(:channel AS text))";

    /**
     * Rows whose request never answered (its instance stopped), a while after their wait ran out: the counts of
     * the rows found and deleted. Housekeeping across tenants, as retention is: no request waits on it.
     */
    static final String DELETE_ABANDONED_WAITERS = """
            -- Across tenants: housekeeping of rows no request waits on.
            WITH abandoned AS MATERIALIZED (
                SELECT tenant, id FROM lease_waiter WHERE wait_until < lease_now() - interval '1 minute'
                LIMIT :batchSize
                FOR UPDATE
            ), gone AS (
                DELETE FROM lease_waiter w USING abandoned a WHERE w.tenant = a.tenant AND w.id = a.id RETURNING 1
            )
            SELECT (SELECT count(*) FROM abandoned) AS abandoned, (SELECT count(*) FROM gone) AS deleted
            """;

    private final JdbcClient jdbc;
    /** The channel a batch notifies freed keys on; null when notifications are off. */
    private final String channel;

    SweeperStore(JdbcClient jdbc, LeasekeeperProperties properties) {
        this.jdbc = jdbc;
        this.channel = properties.waiting().notifications() ? FreedKeys.CHANNEL : null;
    }

    /** Up to {@code limit} tenants with a due lease, in tenant order after {@code after} (null: from the first). */
    List<String> dueTenants(String after, int limit) {
        return jdbc.sql(DUE_TENANTS).param("after", after).param("limit", limit).query(String.class).list();
    }

    /** Expires up to {@code batchSize} due leases of the tenant with their events; returns how many. */
    int expireDue(String tenant, int batchSize) {
        return jdbc.sql(EXPIRE_DUE).param("tenant", tenant).param("batchSize", batchSize).param("channel", channel)
                .query(Integer.class).single();
    }

    /**
     * Deletes up to {@code batchSize} rows of waiting acquires that never answered; returns how many. In a
     * transaction, so that a delete swallowed rolls the batch back.
     */
    @Transactional
    public int deleteAbandonedWaiters(int batchSize) {
        return jdbc.sql(DELETE_ABANDONED_WAITERS).param("batchSize", batchSize).query((rs, n) -> {
            long found = rs.getLong("abandoned");
            long deleted = rs.getLong("deleted");
            if (deleted != found) {
                throw new IllegalStateException("SweeperStore.DELETE_ABANDONED_WAITERS on a sweeper batch: it found "
                        + found + " rows to write under their lock but wrote " + deleted
                        + " (its row counts contradict what it assumed; rolled back)");
            }
            return Math.toIntExact(deleted);
        }).single();
    }
}
