package io.leasekeeper.retention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.TestDatabase;
import io.leasekeeper.sweeper.LeaseSweeper;
import io.micrometer.core.instrument.MeterRegistry;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;

/**
 * Retention (EventPartitions, EndedLeases): a lease, its events and its key are kept the retention after the lease
 * could last have ended (acquisition + lifetime cap + retention, here 2 s + 1 s), then retired: the lease and key rows
 * deleted, the events with their whole partition (here one second of acquisitions). On a database of its own, so that
 * the leases other tests leave active do not hold its partitions, and with the scheduled job far apart: the test runs
 * it.
 */
@DirtiesContext
@TestPropertySource(properties = {
        "leasekeeper.lease.max-ttl=2s", "leasekeeper.lease.default-max-lifetime=2s",
        "leasekeeper.lease.max-lifetime-cap=2s", "leasekeeper.audit.retention=1s",
        "leasekeeper.idempotency.retention=1s", "leasekeeper.audit.partition-width=1s",
        "leasekeeper.audit.partitions-ahead=120", "leasekeeper.audit.cleanup-interval=60s",
        "leasekeeper.audit.cleanup-enabled=true"})
class RetentionTest extends IntegrationTest {

    private static final String DATABASE = TestDatabase.newDatabase("retention");
    private static final Duration KEPT = Duration.ofSeconds(3);

    @DynamicPropertySource
    static void ownDatabase(DynamicPropertyRegistry registry) {
        // The pool's own URL: IntegrationTest's spring.datasource.url is the shared database's, and Hikari's
        // settings are bound onto the pool after it.
        registry.add("spring.datasource.hikari.jdbc-url", () -> DATABASE);
    }

    @AfterAll
    static void dropDatabase() {
        TestDatabase.dropDatabase(DATABASE);
    }

    @Autowired
    AuditRetention retention;

    @Autowired
    EventPartitions partitions;

    @Autowired
    LeaseSweeper sweeper;

    @Autowired
    MeterRegistry meters;

    private Instant dbNow() {
        return jdbc.sql("SELECT lease_now()").query(OffsetDateTime.class).single().toInstant();
    }

    private boolean leaseExists(String leaseId) {
        return jdbc.sql("SELECT count(*) FROM lease WHERE id = CAST(:id AS uuid)").param("id", leaseId)
                .query(Long.class).single() == 1;
    }

    private Instant acquiredAt(String leaseId) {
        return jdbc.sql("SELECT acquired_at FROM lease WHERE id = CAST(:id AS uuid)").param("id", leaseId)
                .query(OffsetDateTime.class).single().toInstant();
    }

    private long events(String leaseId) {
        return jdbc.sql("SELECT count(*) FROM lease_event WHERE lease_id = CAST(:id AS uuid)").param("id", leaseId)
                .query(Long.class).single();
    }

    private long keyId(String target) {
        return jdbc.sql("SELECT id FROM lease_key WHERE tenant = :t AND target_value = :v")
                .param("t", tenant).param("v", target).query(Long.class).single();
    }

    private boolean keyExists(String target) {
        return jdbc.sql("SELECT count(*) FROM lease_key WHERE tenant = :t AND target_value = :v")
                .param("t", tenant).param("v", target).query(Long.class).single() == 1;
    }

    private JsonNode granted(String token, String target) {
        Api.Response acquired = acquire(token, target, "job", "h", 2);
        assertThat(acquired.status()).as(acquired.raw()).isEqualTo(201);
        return acquired.body();
    }

    private String released(String token, String target) {
        JsonNode lease = granted(token, target);
        String id = lease.get("leaseId").asString();
        assertThat(release(token, id, lease.get("fencingToken").asLong()).status()).isEqualTo(200);
        return id;
    }

    /** Runs the job until {@code leaseId}'s row is gone, within a deadline. */
    private void retireUntilGone(String leaseId) {
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200)).until(() -> {
            retention.run();
            return !leaseExists(leaseId);
        });
    }

    @Test
    void aLeaseItsEventsAndItsKeyAreRetiredTogetherOnceNoLeaseOfTheirPartitionCanStillBeActive() {
        String w = writer("alice");
        // Acquired first, left to expire, and not swept: an active row acquired before the second lease.
        String unswept = granted(w, "unswept").get("leaseId").asString();
        String ended = released(w, "ended");
        assertThat(events(ended)).isEqualTo(2);
        Instant acquired = acquiredAt(ended);

        retireUntilGone(ended);

        assertThat(api.get("/v1/leases/" + ended, w).status()).isEqualTo(404);
        assertThat(api.get("/v1/leases/" + ended + "/events", w).status()).isEqualTo(404);
        assertThat(keyExists("ended")).isFalse();
        // Past the retention of the ended lease's partition too, the unswept lease, still 'active' in its row and
        // acquired before that partition's upper bound, keeps the partitions of both leases whole.
        Instant upper = partitions.partitions().stream().map(EventPartitions.Partition::upper)
                .filter(bound -> bound.isAfter(acquired)).findFirst().orElseThrow();
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100))
                .until(() -> !dbNow().minus(KEPT).isBefore(upper));
        retention.run();
        assertThat(leaseExists(unswept)).isTrue();
        assertThat(events(ended)).isEqualTo(2);
        assertThat(events(unswept)).isEqualTo(1);

        assertThat(sweeper.sweepDue()).isPositive();
        // The partition goes once its upper bound (up to a width after the leases' acquisition) is past too.
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200)).until(() -> {
            retention.run();
            return events(ended) == 0;
        });

        assertThat(leaseExists(unswept)).isFalse();
        assertThat(keyExists("unswept")).isFalse();
        assertThat(events(ended)).isZero();
        assertThat(events(unswept)).isZero();
        Instant cutoff = dbNow().minus(KEPT);
        assertThat(partitions.partitions()).allSatisfy(p -> assertThat(p.upper()).isAfter(cutoff));
    }

    @Test
    void aKeyWithANewerLeaseStaysWhenItsOldLeaseIsRetired() {
        String w = writer("alice");
        String old = released(w, "reused");
        JsonNode newer = granted(w, "reused");
        long keyId = keyId("reused");

        retireUntilGone(old);

        String newerId = newer.get("leaseId").asString();
        assertThat(api.get("/v1/leases/" + newerId, w).status()).isEqualTo(200);
        assertThat(eventTypes(newerId)).startsWith("ACQUIRED");
        // The newer lease (2 s at most) has run out by now: the next one is granted on the same key row.
        assertThat(granted(w, "reused").get("fencingToken").asLong()).isGreaterThan(newer.get("fencingToken").asLong());
        assertThat(keyId("reused")).isEqualTo(keyId);
    }

    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void anInstanceStartsWhileAnotherHoldsTheJobPastTheStatementTimeoutWhenThePartitionsReachAheadEnough(
            CapturedOutput output) throws Exception {
        try (Connection other = DriverManager.getConnection(DATABASE)) {
            try (Statement lock = other.createStatement()) {
                lock.execute("SELECT pg_advisory_lock(" + EventPartitions.LOCK + ")");
            }
            // What a starting instance runs: it waits for the lock until its statement timeout (5 s), then finds
            // partitions 100 s and more ahead.
            partitions.afterPropertiesSet();
        }
        assertThat(output.getOut()).contains("Audit partitions not made at start");
        assertThat(meters.get("leasekeeper.audit.partitions.horizon").gauge().value()).isGreaterThan(60.0);
    }

    @Test
    void partitionsAreMadeAheadOfTheClockAtStartAndAtEveryRunWithoutGaps() {
        List<EventPartitions.Partition> made = partitions.partitions();
        assertThat(made.getLast().upper()).isAfter(dbNow().plus(Duration.ofSeconds(100)));

        String database = jdbc.sql("SELECT current_database()").query(String.class).single();
        assertThat(database).startsWith("retention_");
        assertThat(DATABASE).contains("/" + database);
        assertThat(partitions.makeAhead()).isBetween(0, 10);
        // The gauge an operator alerts on: how far ahead partitions reach (here 120 widths of 1 s).
        assertThat(meters.get("leasekeeper.audit.partitions.horizon").gauge().value()).isBetween(100.0, 121.0);
        assertThat(meters.get("leasekeeper.audit.partition.width").gauge().value()).isEqualTo(1.0);
        // Contiguous: every lower bound but the oldest is another partition's upper bound.
        List<EventPartitions.Partition> now = partitions.partitions();
        for (int i = 1; i < now.size(); i++) {
            String lower = jdbc.sql("""
                    SELECT CAST(substring(pg_get_expr(c.relpartbound, c.oid) FROM 'FROM \\(''(.*)''\\) TO') AS timestamptz)
                    FROM pg_class c WHERE c.relname = :name
                    """).param("name", now.get(i).name()).query(OffsetDateTime.class).single().toInstant().toString();
            assertThat(lower).isEqualTo(now.get(i - 1).upper().toString());
        }
    }
}
