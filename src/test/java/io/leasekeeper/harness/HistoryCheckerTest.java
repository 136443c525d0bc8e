package io.leasekeeper.harness;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.IntegrationTest;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The checker sees the violations it is there to see. */
class HistoryCheckerTest extends IntegrationTest {

    @Test
    void aCleanHistoryHasNoViolation() {
        var lease = acquire(writer("alice"), "clean", "job", "h", 30).body();
        release(writer("alice"), lease.get("leaseId").asString(), lease.get("fencingToken").asLong());
        acquire(writer("bob"), "clean", "job", "h", 30);
        assertThat(HistoryChecker.check(jdbc, tenant, List.of())).isEmpty();
    }

    @Test
    void overlappingLeasesFallingTokensAndBrokenEventChainsAreReported() {
        var first = acquire(writer("alice"), "forged", "job", "h", 30).body();
        String firstId = first.get("leaseId").asString();
        release(writer("alice"), firstId, first.get("fencingToken").asLong());
        var second = acquire(writer("bob"), "forged", "job", "h", 30).body();
        // Forge history behind the service's back (test only): the first lease "ended" after the second
        // was granted, with a token above it, and lost its RELEASED event.
        jdbc.sql("ALTER TABLE lease_event DISABLE TRIGGER lease_event_append_only").update();
        jdbc.sql("ALTER TABLE lease DISABLE TRIGGER lease_terminal_is_final").update();
        try {
            jdbc.sql("""
                    UPDATE lease SET ended_at = ended_at + interval '1 hour', expires_at = expires_at + interval '1 hour',
                                     max_expires_at = max_expires_at + interval '1 hour',
                                     fencing_token = fencing_token + 1000000000
                    WHERE id = CAST(:id AS uuid)
                    """).param("id", firstId).update();
            jdbc.sql("DELETE FROM lease_event WHERE lease_id = CAST(:id AS uuid) AND type = 'RELEASED'")
                    .param("id", firstId).update();
        } finally {
            jdbc.sql("ALTER TABLE lease_event ENABLE TRIGGER lease_event_append_only").update();
            jdbc.sql("ALTER TABLE lease ENABLE TRIGGER lease_terminal_is_final").update();
        }

        List<String> violations = HistoryChecker.check(jdbc, tenant, List.of());
        assertThat(violations).anySatisfy(v -> assertThat(v).contains("while").contains(firstId));
        assertThat(violations).anySatisfy(v -> assertThat(v).contains("granted after"));
        assertThat(violations).anySatisfy(v -> assertThat(v).contains("is released but its events are"));
        assertThat(second.get("leaseId").asString()).isNotEqualTo(firstId);
    }

    @Test
    void aRegisterThatAcceptsAnOlderTokenOrRefusesANewerOneIsReported() {
        List<FencedRegister.Write> log = List.of(
                new FencedRegister.Write(1, "k", 10, "a", false, true),
                new FencedRegister.Write(2, "k", 7, "b", true, true),
                new FencedRegister.Write(3, "k", 12, "c", false, false));
        List<String> violations = HistoryChecker.check(jdbc, tenant, log);
        assertThat(violations).containsExactly(
                "register k: accepted token 7 after 10",
                "register k: refused token 12 though the highest was 10");
    }

    @Test
    void aRetriedRequestThatMadeTwoLeasesIsReported() {
        String first = acquire(writer("alice"), "retried-a", "job", "h", 30).body().get("leaseId").asString();
        String second = acquire(writer("alice"), "retried-b", "job", "h", 30).body().get("leaseId").asString();
        // Forge (test only): both leases' ACQUIRED events carry the same Idempotency-Key, as a service that
        // executed a retried acquire twice would have written.
        jdbc.sql("ALTER TABLE lease_event DISABLE TRIGGER lease_event_append_only").update();
        jdbc.sql("ALTER TABLE lease DISABLE TRIGGER lease_terminal_is_final").update();
        try {
            jdbc.sql("UPDATE lease_event SET request_id = 'alice-7-acquire' WHERE lease_id IN (CAST(:a AS uuid), CAST(:b AS uuid))")
                    .param("a", first).param("b", second).update();
        } finally {
            jdbc.sql("ALTER TABLE lease_event ENABLE TRIGGER lease_event_append_only").update();
            jdbc.sql("ALTER TABLE lease ENABLE TRIGGER lease_terminal_is_final").update();
        }
        assertThat(HistoryChecker.check(jdbc, tenant, List.of())).containsExactly("request alice-7-acquire made 2 leases");
    }

    @Test
    void a503IsAllowedOnlyDuringADatabaseOutageAndItsRecovery() {
        long second = 1_000_000_000L;
        List<FaultWindow> windows = List.of(
                new FaultWindow("kill -9 #1", 0, 5 * second, false),
                new FaultWindow("PostgreSQL restart #1", 100 * second, 102 * second, true));
        long recovery = FaultWindow.RECOVERY.toNanos();
        var during = new Workload.Summary(java.util.Map.of(), List.of(),
                List.of(101 * second, 102 * second + recovery), List.of());
        assertThat(HistoryChecker.checkServerErrors(during, windows)).isEmpty();
        assertThat(FaultWindow.attribute(during.unavailableAt(), windows, true))
                .containsExactly(java.util.Map.entry("PostgreSQL restart #1", 2L), java.util.Map.entry(FaultWindow.OUTSIDE, 0L));

        // An instance being killed is no database outage, and recovery is bounded.
        var outside = new Workload.Summary(java.util.Map.of(), List.of(),
                List.of(2 * second, 102 * second + recovery + 1), List.of());
        assertThat(HistoryChecker.checkServerErrors(outside, windows))
                .containsExactly("2 answers were 503 outside every database outage and its 10 s of recovery"
                        + " (by fault window: {kill -9 #1=1, " + FaultWindow.OUTSIDE + "=1})");
    }

    @Test
    void staleWritesAreCountedByWhetherANewerHolderHadWritten() {
        List<FencedRegister.Write> log = List.of(
                new FencedRegister.Write(1, "k", 5, "paused", true, true),   // before any newer write
                new FencedRegister.Write(2, "k", 9, "newer", false, true),
                new FencedRegister.Write(3, "k", 6, "paused", true, false)); // fenced off
        assertThat(HistoryChecker.check(jdbc, tenant, log)).isEmpty();
        assertThat(HistoryChecker.staleWrites(log)).isEqualTo("2 by clients paused past their TTL: 1 of 1 written"
                + " after a newer holder's write were rejected; 1 came before any newer write and were accepted"
                + " (the newer holder's write supersedes them)");
    }
}
