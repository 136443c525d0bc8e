package io.leasekeeper.lease;

import io.leasekeeper.key.LeaseKey;
import io.leasekeeper.security.Caller;
import io.leasekeeper.key.Target;
import io.leasekeeper.key.TargetType;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.springframework.stereotype.Component;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * A lease's columns as every statement of the lease feature selects them ({@link #COLUMNS}, {@code l} the lease and
 * {@code k} its key), read back into a {@link Lease}; and a key, an acquire and its caller as the statements'
 * parameters name them.
 */
@Component
class LeaseRows {

    static final String COLUMNS = """
            l.id, l.owner, l.holder, l.fencing_token, l.state, l.acquired_at, l.renewed_at, l.expires_at,
            l.max_expires_at, l.ended_at, l.end_reason, l.ttl_seconds, l.max_lifetime_seconds,
            l.lock_delay_seconds, l.job_id, l.trace_id, l.metadata,
            k.tenant, k.program, k.target_type, k.target_value, k.actor, k.operation""";

    private static final TypeReference<Map<String, Object>> JSON_OBJECT = new TypeReference<>() {
    };

    private final JsonMapper json;

    LeaseRows(JsonMapper json) {
        this.json = json;
    }

    /** The row's lease, read at the row's {@code now}. */
    LeaseRead read(ResultSet rs, int row) throws SQLException {
        return new LeaseRead(instant(rs, "now"), lease(rs, row));
    }

    Lease lease(ResultSet rs, int row) throws SQLException {
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

    /** Who makes a transition, and in which request: written to its audit event. */
    static Map<String, Object> by(String principal, Caller caller) {
        var params = new HashMap<String, Object>();
        params.put("principal", principal);
        params.put("requestId", caller.requestId());
        params.put("traceId", caller.traceId());
        return params;
    }

    /** The key's parts as the statements' parameters name them. */
    static Map<String, Object> keyParams(LeaseKey key) {
        var params = new HashMap<String, Object>();
        params.put("tenant", key.tenant());
        params.put("program", key.program());
        params.put("targetType", key.target().type().wireName());
        params.put("targetValue", key.target().value());
        params.put("actor", key.actor());
        params.put("operation", key.operation());
        return params;
    }

    static Instant instant(ResultSet rs, String column) throws SQLException {
        OffsetDateTime value = rs.getObject(column, OffsetDateTime.class);
        return value == null ? null : value.toInstant();
    }
}
