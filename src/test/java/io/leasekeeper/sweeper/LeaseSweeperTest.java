package io.leasekeeper.sweeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;

/**
 * The sweeper, called directly (its schedule is off in tests). It scans every tenant, and leases other
 * test classes left behind may fall due at any moment, so each test starts from empty tables (test
 * classes run one at a time).
 */
@TestPropertySource(properties = {"leasekeeper.sweeper.batch-size=25", "leasekeeper.sweeper.workers=4"})
class LeaseSweeperTest extends IntegrationTest {

    @Autowired
    LeaseSweeper sweeper;

    @BeforeEach
    void noOtherLeases() {
        jdbc.sql("TRUNCATE idempotency_record, lease_waiter, lease_event, lease, lease_key").update();
    }

    @Test
    void dueLeasesExpireInBatchesWithOneExpiredEventEach() {
        List<String> due = acquireMany(60, "due");
        List<String> notDue = acquireMany(3, "fresh");
        due.forEach(this::backdateExpiry);

        assertThat(sweeper.sweepOnce(tenant)).isEqualTo(25);
        assertThat(sweeper.sweepOnce(tenant)).isEqualTo(25);
        assertThat(sweeper.sweepOnce(tenant)).isEqualTo(10);
        assertThat(sweeper.sweepOnce(tenant)).isZero();

        for (String id : due) {
            assertThat(storedState(id)).isEqualTo("expired");
            assertThat(eventTypes(id)).containsExactly("ACQUIRED", "EXPIRED");
        }
        notDue.forEach(id -> assertThat(storedState(id)).isEqualTo("active"));
        String principal = jdbc.sql("SELECT DISTINCT principal FROM lease_event WHERE type = 'EXPIRED' AND lease_id = CAST(:id AS uuid)")
                .param("id", due.getFirst()).query(String.class).single();
        assertThat(principal).isEqualTo("system:sweeper");
        JsonNode read = api.get("/v1/leases/" + due.getFirst(), writer("alice")).body();
        assertThat(read.get("endedAt").asString()).isEqualTo(read.get("expiresAt").asString());
    }

    @Test
    void aBacklogIsSweptByTheWorkersTogetherAndEachLeaseExpiresOnce() {
        List<String> due = acquireMany(300, "backlog");
        List<String> notDue = acquireMany(3, "kept");
        due.forEach(this::backdateExpiry);

        // A worker stops at its first short batch, and a batch can come back short while leases remain
        // (keys another worker held, or expired since its snapshot): the next run takes the rest.
        int total = 0;
        for (int run = 0, swept; run < 10 && (swept = sweeper.sweepDue()) > 0; run++) {
            total += swept;
        }
        assertThat(total).isEqualTo(300);
        for (String id : due) {
            assertThat(storedState(id)).isEqualTo("expired");
            assertThat(eventTypes(id)).containsExactly("ACQUIRED", "EXPIRED");
        }
        notDue.forEach(id -> assertThat(storedState(id)).isEqualTo("active"));
    }

    @Test
    void twoSweepersRunningAtOnceNeverExpireALeaseTwice() throws Exception {
        List<String> due = acquireMany(200, "twice");
        due.forEach(this::backdateExpiry);
        CyclicBarrier start = new CyclicBarrier(2);
        try (ExecutorService pool = Executors.newFixedThreadPool(2)) {
            List<Future<Integer>> runs = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                runs.add(pool.submit(() -> {
                    start.await();
                    int total = 0;
                    for (int expired; (expired = sweeper.sweepOnce(tenant)) > 0; ) {
                        total += expired;
                    }
                    return total;
                }));
            }
            assertThat(runs.get(0).get() + runs.get(1).get()).isEqualTo(200);
        }
        long events = jdbc.sql("""
                SELECT count(*) FROM lease_event e JOIN lease l ON l.id = e.lease_id
                WHERE l.tenant = :tenant AND e.type = 'EXPIRED'
                """).param("tenant", tenant).query(Long.class).single();
        assertThat(events).isEqualTo(200);
        due.forEach(id -> assertThat(eventTypes(id)).containsExactly("ACQUIRED", "EXPIRED"));
    }

    @Test
    void aRenewRacingTheSweeperEitherRenewsOrReportsExpiryNeverBoth() throws Exception {
        String w = writer("alice");
        CyclicBarrier start = new CyclicBarrier(2);
        try (ExecutorService pool = Executors.newFixedThreadPool(2)) {
            for (int round = 0; round < 20; round++) {
                JsonNode lease = acquire(w, "race-" + round, "job", "h", 30).body();
                String id = lease.get("leaseId").asString();
                long token = lease.get("fencingToken").asLong();
                // Due right about now, so the renew and the sweep meet at the expiry instant.
                jdbc.sql("UPDATE lease SET expires_at = lease_now() + interval '2 milliseconds' WHERE id = CAST(:id AS uuid)")
                        .param("id", id).update();
                Future<Api.Response> renew = pool.submit(() -> {
                    start.await();
                    return renew(w, id, token);
                });
                Future<Integer> sweep = pool.submit(() -> {
                    start.await();
                    return sweeper.sweepOnce(tenant);
                });
                Api.Response renewed = renew.get();
                sweep.get();
                sweeper.sweepDue();

                List<String> events = eventTypes(id);
                if (renewed.status() == 200) {
                    assertThat(events).as("round %d", round).containsExactly("ACQUIRED", "RENEWED");
                    assertThat(storedState(id)).isEqualTo("active");
                } else {
                    assertThat(renewed.code()).as("round %d", round).isEqualTo("LEASE_EXPIRED");
                    assertThat(events).as("round %d", round).containsExactly("ACQUIRED", "EXPIRED");
                    assertThat(storedState(id)).isEqualTo("expired");
                }
            }
        }
    }

    private List<String> acquireMany(int count, String prefix) {
        String w = writer("alice");
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Api.Response r = acquire(w, prefix + "-" + i, "job", "h", 30);
            assertThat(r.status()).isEqualTo(201);
            ids.add(r.body().get("leaseId").asString());
        }
        return ids;
    }

    private String storedState(String id) {
        return jdbc.sql("SELECT state FROM lease WHERE id = CAST(:id AS uuid)").param("id", id).query(String.class).single();
    }
}
