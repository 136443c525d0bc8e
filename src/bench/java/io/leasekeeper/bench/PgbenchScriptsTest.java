package io.leasekeeper.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.TestDatabase;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The benchmark's database ceiling stays runnable: pgbench runs the scripts made from the service's own
 * statements against the migrated schema, without a failed transaction, and they do the service's work
 * (leases acquired and released, renewed, each with its audit event).
 */
class PgbenchScriptsTest extends IntegrationTest {

    @Test
    void theCycleAndRenewScriptsRunTheServicesStatementsWithoutAFailure(@TempDir Path dir) throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(Path.of(Pgbench.BIN)), "pgbench is not installed");
        Database database = new Database(TestDatabase.connection().url(), 100);
        Pgbench pgbench = new Pgbench(database, dir);
        database.cycleKeys();
        long releasedBefore = released();

        Pgbench.Result cycle = pgbench.run("cycle", Pgbench.cycleScript(50), 2, Duration.ofSeconds(1), Duration.ofSeconds(1));
        assertThat(cycle.failed()).isZero();
        assertThat(cycle.tps()).isPositive();
        assertThat(cycle.latencies().getTotalCount()).isPositive();
        assertThat(released()).isGreaterThan(releasedBefore);
        assertThat(jdbc.sql("""
                SELECT count(*) FROM lease l WHERE l.tenant = 'bench' AND l.state = 'released'
                  AND NOT EXISTS (SELECT 1 FROM lease_event e WHERE e.lease_id = l.id AND e.type = 'RELEASED')""")
                .query(Long.class).single()).as("released leases without their event").isZero();

        String prefix = "renew-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        database.seed("bench", "bench", prefix, 20, database.now().plusSeconds(3600), 3600);
        try {
            database.numbered(prefix);
            Pgbench.Result renew = pgbench.run("renew", Pgbench.renewScript(20), 2, Duration.ofSeconds(1), Duration.ofSeconds(1));
            assertThat(renew.failed()).isZero();
            assertThat(jdbc.sql("""
                    SELECT count(*) FROM lease_event e JOIN lease l ON l.id = e.lease_id JOIN lease_key k ON k.id = l.key_id
                    WHERE e.type = 'RENEWED' AND k.target_value LIKE :prefix || '%'""")
                    .param("prefix", prefix).query(Long.class).single()).isPositive();
        } finally {
            jdbc.sql("DROP TABLE IF EXISTS bench_lease").update();
        }
    }

    private long released() {
        return jdbc.sql("SELECT count(*) FROM lease WHERE tenant = 'bench' AND state = 'released'").query(Long.class).single();
    }
}
