package io.leasekeeper.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.leasekeeper.support.IntegrationTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.dao.DataAccessException;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.JsonNode;

/** The audit log is append-only: no event is updated or deleted; retention drops whole partitions (RetentionTest). */
class AuditIntegrityTest extends IntegrationTest {

    @Autowired
    TransactionTemplate transactions;

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
    void noTransactionMayDeleteEventsNotEvenOneThatDeclaresItselfTheOldRetentionJob() {
        JsonNode lease = acquire(writer("alice"), "no-exception", "job", "h", 30).body();
        String id = lease.get("leaseId").asString();

        // The retention job once deleted events in a transaction that set this; it drops whole partitions.
        assertThatThrownBy(() -> transactions.executeWithoutResult(status -> {
            jdbc.sql("SELECT set_config('leasekeeper.audit_retention', 'on', true)").query(String.class).single();
            jdbc.sql("DELETE FROM lease_event WHERE lease_id = CAST(:id AS uuid)").param("id", id).update();
        })).isInstanceOf(DataAccessException.class).rootCause().hasMessageContaining("append-only");
        assertThat(eventTypes(id)).containsExactly("ACQUIRED");
    }
}
