package io.leasekeeper.retention;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.OwnDatabase;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ContextConfiguration;
import org.springframework.test.context.TestPropertySource;

/**
 * An audit write never fails for a missing partition (issue 32): the partitions end before now, as after an outage
 * of the database or of the retention job longer than they reach (here made so by dropping the empty partitions
 * from the one holding now on, on a database of its own, and setting the horizon back: the job, every hour here,
 * does not run again within the test), and an acquire is still granted with its ACQUIRED event, in a partition its
 * grant made.
 */
@TestPropertySource(properties = {"leasekeeper.audit.partition-width=1h", "leasekeeper.audit.partitions-ahead=2",
        "leasekeeper.audit.cleanup-interval=1h"})
@ContextConfiguration(initializers = OwnDatabase.class)
@DirtiesContext
class PartitionsOnDemandTest extends IntegrationTest {

    @Test
    void aGrantPastThePartitionsMakesTheOneItNeedsAndIsAnswered201WithItsEvent() {
        List<String> dropped = jdbc.sql("""
                SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                WHERE i.inhparent = CAST('lease_event' AS regclass)
                  AND CAST(substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \\(''(.*)''\\)') AS timestamptz)
                      > lease_now()
                """).query(String.class).list();
        assertThat(dropped).as("the partitions ahead of now").isNotEmpty();
        dropped.forEach(name -> jdbc.sql("DROP TABLE " + name).update());
        jdbc.sql("""
                UPDATE lease_event_horizon SET upper = (
                    SELECT max(CAST(substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \\(''(.*)''\\)') AS timestamptz))
                    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                    WHERE i.inhparent = CAST('lease_event' AS regclass))
                """).update();
        assertThat(jdbc.sql("SELECT upper <= lease_now() FROM lease_event_horizon").query(Boolean.class).single())
                .as("the partitions end before now").isTrue();
        int partitionsBefore = partitions();

        Api.Response granted = acquire(writer("alice"), "past-the-partitions", "job", "h", 30);

        assertThat(granted.status()).isEqualTo(201);
        String leaseId = granted.body().get("leaseId").asString();
        assertThat(eventTypes(leaseId)).containsExactly("ACQUIRED");
        assertThat(partitions()).as("the grant made a partition").isEqualTo(partitionsBefore + 1);
        assertThat(jdbc.sql("""
                SELECT upper > (SELECT acquired_at FROM lease WHERE id = CAST(:id AS uuid)) FROM lease_event_horizon
                """).param("id", leaseId).query(Boolean.class).single()).isTrue();
    }

    private int partitions() {
        return jdbc.sql("SELECT count(*) FROM pg_inherits WHERE inhparent = CAST('lease_event' AS regclass)")
                .query(Integer.class).single();
    }
}
