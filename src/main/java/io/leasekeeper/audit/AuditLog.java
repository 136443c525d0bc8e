package io.leasekeeper.audit;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * The audit table: a lease's history, a page at a time. Events are written by the statements that make the
 * transitions they record ({@code LeaseStore}), so a transition and its event commit together or not at all;
 * the table refuses updates and deletes, and retention drops whole partitions of it ({@code EventPartitions}).
 */
@Component
public class AuditLog {

    /*
     * One page of a lease's history, oldest first: the events after :afterEventId (0 before the first page),
     * at most :limit of them, by the primary key (tenant, lease_id, id, lease_acquired_at), so every page costs the
     * same however long the history; no OFFSET. The lease's acquired_at is its events' partition key, so the page
     * reads one partition. The lease is found by its primary key (tenant, id). The LEFT JOIN answers the lease's
     * existence in the same snapshot: no row at all is no such lease in this tenant; one row without an event is a
     * lease with no event past the cursor.
     */
    private static final String HISTORY_PAGE = """
            SELECT e.id, e.lease_id, e.type, e.from_state, e.to_state, e.fencing_token, e.at,
                   e.principal, e.request_id, e.trace_id, e.details
            FROM lease l
            LEFT JOIN LATERAL (SELECT * FROM lease_event
                               WHERE tenant = :tenant AND lease_id = l.id AND lease_acquired_at = l.acquired_at
                                 AND id > :afterEventId
                               ORDER BY id
                               LIMIT :limit) e ON true
            WHERE l.tenant = :tenant AND l.id = :leaseId
            ORDER BY e.id
            """;

    private static final TypeReference<Map<String, Object>> JSON_OBJECT = new TypeReference<>() {
    };

    private final JdbcClient jdbc;
    private final JsonMapper json;

    AuditLog(JdbcClient jdbc, JsonMapper json) {
        this.jdbc = jdbc;
        this.json = json;
    }

    /**
     * Where a page of a history starts and how long it is: the events after {@code afterEventId} (0: from the
     * first), at most {@code limit}.
     */
    public record PageRequest(long afterEventId, int limit) {
    }

    /**
     * Up to {@code limit + 1} events of a lease of this tenant after the page's start, oldest first: the one
     * past the page tells whether another follows. Empty when there is no such lease in this tenant.
     */
    public Optional<List<LeaseEvent>> pageAndOneMore(UUID leaseId, String tenant, PageRequest page) {
        return jdbc.sql(HISTORY_PAGE)
                .param("leaseId", leaseId)
                .param("tenant", tenant)
                .param("afterEventId", page.afterEventId())
                .param("limit", page.limit() + 1)
                .query(rs -> {
                    boolean leaseFound = false;
                    List<LeaseEvent> events = new ArrayList<>();
                    while (rs.next()) {
                        leaseFound = true;
                        if (rs.getObject("id") != null) {
                            events.add(event(rs));
                        }
                    }
                    return leaseFound ? Optional.of(events) : Optional.<List<LeaseEvent>>empty();
                });
    }

    private LeaseEvent event(ResultSet rs) throws SQLException {
        return new LeaseEvent(
                rs.getLong("id"),
                rs.getObject("lease_id", UUID.class),
                EventType.valueOf(rs.getString("type")),
                rs.getString("from_state"),
                rs.getString("to_state"),
                rs.getLong("fencing_token"),
                rs.getObject("at", OffsetDateTime.class).toInstant(),
                rs.getString("principal"),
                rs.getString("request_id"),
                rs.getString("trace_id"),
                json.readValue(rs.getString("details"), JSON_OBJECT));
    }
}
