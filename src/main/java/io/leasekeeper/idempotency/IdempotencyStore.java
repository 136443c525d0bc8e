package io.leasekeeper.idempotency;

import io.leasekeeper.config.LeasekeeperProperties;
import io.leasekeeper.web.ApiException;
import io.leasekeeper.web.ErrorCode;
import java.util.Optional;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;

/**
 * Idempotency records, scoped to (tenant, subject, key). {@link #claim} and {@link #complete} run inside
 * the transaction of the operation they guard, so a record exists only for a committed success and a
 * retry can never execute the operation a second time.
 */
@Component
public class IdempotencyStore {

    /** A request, identified by its key within the caller's tenant and subject, and what it asked. */
    public record Request(String tenant, String subject, String key, String fingerprint) {
    }

    /** A success that was committed before: its status and the lease it answered with. */
    public record Completed(int status, UUID leaseId) {
    }

    // Waits on a concurrent claim of the same key until that transaction ends.
    private static final String CLAIM = """
            INSERT INTO idempotency_record (tenant, subject, idempotency_key, fingerprint)
            VALUES (:tenant, :subject, :key, :fingerprint)
            ON CONFLICT DO NOTHING
            """;

    private static final String EXISTING = """
            SELECT fingerprint, status, lease_id, created_at < lease_now() - make_interval(secs => :retention) AS stale
            FROM idempotency_record
            WHERE tenant = :tenant AND subject = :subject AND idempotency_key = :key
            FOR UPDATE
            """;

    private static final String FORGET = """
            DELETE FROM idempotency_record WHERE tenant = :tenant AND subject = :subject AND idempotency_key = :key
            """;

    private static final String COMPLETE = """
            UPDATE idempotency_record SET status = :status, lease_id = :leaseId
            WHERE tenant = :tenant AND subject = :subject AND idempotency_key = :key AND status IS NULL
            """;

    private static final String DELETE_OLD = """
            -- Across tenants: retention.
            DELETE FROM idempotency_record
            WHERE (tenant, subject, idempotency_key) IN (
                SELECT tenant, subject, idempotency_key FROM idempotency_record
                WHERE created_at < lease_now() - make_interval(secs => :retention)
                LIMIT :batchSize)
            """;

    private record Existing(String fingerprint, Integer status, UUID leaseId, boolean stale) {
    }

    private final JdbcClient jdbc;
    private final long retentionSeconds;

    IdempotencyStore(JdbcClient jdbc, LeasekeeperProperties properties) {
        this.jdbc = jdbc;
        this.retentionSeconds = properties.idempotency().retention().toSeconds();
    }

    /**
     * Claims the key for this request, or answers the success committed under it before. The same key
     * with a different request is 422 IDEMPOTENCY_KEY_REUSED. A record older than the retention counts
     * as absent.
     */
    @Transactional(propagation = Propagation.MANDATORY)
    public Optional<Completed> claim(Request r) {
        for (int attempt = 0; attempt < 2; attempt++) {
            if (insert(r)) {
                return Optional.empty();
            }
            Optional<Existing> existing = jdbc.sql(EXISTING).params(params(r)).param("retention", retentionSeconds)
                    .query((rs, n) -> new Existing(rs.getString("fingerprint"), (Integer) rs.getObject("status"),
                            rs.getObject("lease_id", UUID.class), rs.getBoolean("stale")))
                    .optional();
            if (existing.isEmpty()) {
                continue; // the retention job removed it between the two statements: claim again
            }
            Existing e = existing.get();
            if (e.stale()) {
                jdbc.sql(FORGET).params(params(r)).update();
                continue;
            }
            if (!e.fingerprint().equals(r.fingerprint())) {
                throw new ApiException(ErrorCode.IDEMPOTENCY_KEY_REUSED,
                        "This Idempotency-Key was used for a different request.");
            }
            if (e.status() == null) {
                throw new IllegalStateException("idempotency record without outcome outside its transaction");
            }
            return Optional.of(new Completed(e.status(), e.leaseId()));
        }
        throw new IllegalStateException("could not claim idempotency key");
    }

    /**
     * Gives the claim up in its own transaction: the request was refused, so its retry runs again. Whatever
     * else the transaction did still commits (an acquire that found the key busy may have recorded the
     * expiry of the key's old lease, or marked the key watched for a waiting acquire).
     */
    @Transactional(propagation = Propagation.MANDATORY)
    public void abandon(Request r) {
        int deleted = jdbc.sql(FORGET).params(params(r)).update();
        if (deleted != 1) {
            throw new IllegalStateException("idempotency record not claimed by this transaction");
        }
    }

    @Transactional(propagation = Propagation.MANDATORY)
    public void complete(Request r, int status, UUID leaseId) {
        int updated = jdbc.sql(COMPLETE).params(params(r)).param("status", status).param("leaseId", leaseId).update();
        if (updated != 1) {
            throw new IllegalStateException("idempotency record not claimed by this transaction");
        }
    }

    /** Deletes up to {@code batchSize} records older than the retention; returns how many. */
    public int deleteExpired(int batchSize) {
        return jdbc.sql(DELETE_OLD).param("retention", retentionSeconds).param("batchSize", batchSize).update();
    }

    private boolean insert(Request r) {
        return jdbc.sql(CLAIM).params(params(r)).update() == 1;
    }

    private static java.util.Map<String, Object> params(Request r) {
        return java.util.Map.of("tenant", r.tenant(), "subject", r.subject(), "key", r.key(),
                "fingerprint", r.fingerprint());
    }
}
