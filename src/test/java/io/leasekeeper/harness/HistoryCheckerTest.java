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
                new FencedRegister.Write(1, "k", 10, "a", true),
                new FencedRegister.Write(2, "k", 7, "b", true),
                new FencedRegister.Write(3, "k", 12, "c", false));
        List<String> violations = HistoryChecker.check(jdbc, tenant, log);
        assertThat(violations).containsExactly(
                "register k: accepted token 7 after 10",
                "register k: refused token 12 though the highest was 10");
    }
}
