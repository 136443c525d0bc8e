package io.leasekeeper.harness;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.TestDatabase;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The fencing workload (24 clients, renewals, pauses past the TTL, retried acquires) against one
 * instance, then the checker over the service's history and the register's log: no violation allowed.
 * {@code MultiInstanceHarnessIT} runs the same workload across service processes under faults.
 */
class FencingWorkloadTest extends IntegrationTest {

    @Test
    void noStaleHolderEverCommitsAndTheHistoryHasNoViolation() throws Exception {
        FencedRegister register = FencedRegister.create(jdbc, TestDatabase.connection());
        Workload.Summary summary = new Workload(List.of(port), register, tenant).run(24, 8);

        List<FencedRegister.Write> writes = register.log();
        List<String> violations = new ArrayList<>(summary.violations());
        violations.addAll(HistoryChecker.check(jdbc, tenant, writes));
        HistoryChecker.print("Fencing workload (1 instance)", summary, writes, violations, List.of(), List.of());

        assertThat(violations).isEmpty();
        assertThat(summary.count("acquired")).isPositive();
        assertThat(summary.count("paused past TTL")).isPositive();
        assertThat(summary.count("acquire replayed")).isPositive();
        assertThat(summary.count("acquired by a waiting acquire")).isPositive();
        assertThat(summary.count("watch ended by release")).isPositive();
        assertThat(writes.stream().filter(FencedRegister.Write::accepted)).isNotEmpty();
    }
}
