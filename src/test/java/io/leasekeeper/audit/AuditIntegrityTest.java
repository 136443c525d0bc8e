package io.leasekeeper.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.IntegrationTest;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.dao.DataAccessException;
import tools.jackson.databind.JsonNode;

/** The audit log is append-only for the service; only the retention job deletes, and only old events. */
class AuditIntegrityTest extends IntegrationTest {

    @Autowired
    AuditLog audit;

    @Test
    void eventsCannotBeUpdatedOrDeleted() {
        JsonNode lease = acquire(writer("alice"), "append-only", "job", "h", 30).body();
        String id = lease.get("leaseId").asString();

        assertThatThrownBy(() -> jdbc.sql("UPDATE lease_event SET principal = 'mallory' WHERE lease_id = CAST(:id AS uuid)")
                .param("id", id).update())
                .isInstanceOf(DataAccessException.class).rootCause().hasMessageContaining("append-only");
        assertThatThrownBy(() -> jdbc.sql("DELETE FROM lease_event WHERE lease_id = CAST(:id AS uuid)")
                .param("id", id).update())
                .isInstanceOf(DataAccessException.class).rootCause().hasMessageContaining("append-only");
        assertThat(eventTypes(id)).containsExactly("ACQUIRED");
    }

    @Test
    void theRetentionJobDeletesOnlyEventsPastTheRetentionAndHistoryThenAnswersEmpty() {
        String w = writer("alice");
        JsonNode lease = acquire(w, "retained", "job", "h", 30).body();
        String id = lease.get("leaseId").asString();

        assertThat(audit.deleteOlderThan(Duration.ofDays(1), 1000)).isZero();
        assertThat(eventTypes(id)).containsExactly("ACQUIRED");

        // With a zero retention every event older than the database's "now" goes; poll until ours has.
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> {
            while (audit.deleteOlderThan(Duration.ZERO, 1000) > 0) {
                // drain
            }
            return eventTypes(id).isEmpty();
        });
        var history = api.get("/v1/leases/" + id + "/events", w);
        assertThat(history.status()).isEqualTo(200);
        assertThat(history.body().get("items").size()).isZero();
        assertThat(api.get("/v1/leases/" + id, w).status()).isEqualTo(200);
    }
}
