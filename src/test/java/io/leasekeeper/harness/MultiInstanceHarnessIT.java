package io.leasekeeper.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.CuttableProxy;
import io.leasekeeper.support.TestDatabase;
import io.leasekeeper.support.TestTokens;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * Three service processes from the built jar against one PostgreSQL, the fencing workload spread across
 * them, and faults injected while it runs: kill -9 of an instance and its restart, every database
 * connection of the service terminated, an instance's answers dropped after commit, and (when
 * LEASEKEEPER_TEST_PG_RESTART names the command) a PostgreSQL restart. Run with {@code ./mvnw verify -Pharness}; see docs/harness.md.
 */
class MultiInstanceHarnessIT {

    @Test
    void noViolationAcrossThreeInstancesUnderFaults() throws Exception {
        TestDatabase.Connection db = TestDatabase.connection();
        JdbcClient jdbc = JdbcClient.create(new DriverManagerDataSource(db.url(), db.username(), db.password()));
        String tenant = "harness-" + UUID.randomUUID().toString().substring(0, 8);
        List<String> arguments = List.of(
                "--spring.datasource.url=" + db.url(), "--spring.datasource.username=" + db.username(),
                "--spring.datasource.password=" + db.password(),
                "--spring.security.oauth2.resourceserver.jwt.public-key-location=" + TestTokens.publicKeyLocation(),
                "--leasekeeper.sweeper.interval=200ms");
        List<ServiceProcess> instances = new ArrayList<>();
        CuttableProxy dropper = null;
        List<String> faults = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                ServiceProcess instance = new ServiceProcess(ServiceProcess.builtJar(), i, arguments);
                instance.start();
                instances.add(instance);
            }
            FencedRegister register = FencedRegister.create(jdbc, db);
            // Instance 2 is reached through a proxy that can drop its answers after the work is done.
            dropper = new CuttableProxy("127.0.0.1", instances.get(2).port());
            List<Integer> ports = List.of(instances.get(0).port(), instances.get(1).port(), dropper.port());
            Workload workload = new Workload(ports, register, tenant);
            int clients = 24;
            int iterations = Integer.getInteger("harness.iterations", 12);
            CompletableFuture<Workload.Summary> run = CompletableFuture.supplyAsync(() -> {
                try {
                    return workload.run(clients, iterations);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });

            // The faults, each once the workload has made some progress (not by the clock).
            long total = (long) clients * iterations;
            await().atMost(Duration.ofMinutes(5)).until(() -> workload.iterationsDone() >= total / 4 || run.isDone());
            instances.get(1).kill();
            faults.add("kill -9 instance 1");
            instances.get(1).start();
            faults.add("restart instance 1");
            await().atMost(Duration.ofMinutes(5)).until(() -> workload.iterationsDone() >= total / 2 || run.isDone());
            int terminated = jdbc.sql("""
                    SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                    WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
                    """).query(Integer.class).single();
            faults.add("pg_terminate_backend of " + terminated + " service connections");

            await().atMost(Duration.ofMinutes(5)).until(() -> workload.iterationsDone() >= total * 6 / 10 || run.isDone());
            dropper.dropResponses(true);
            faults.add("responses of instance 2 dropped after commit");
            await().atMost(Duration.ofMinutes(5)).until(() -> workload.iterationsDone() >= total * 3 / 4 || run.isDone());
            dropper.dropResponses(false);

            String restart = System.getenv("LEASEKEEPER_TEST_PG_RESTART");
            if (restart != null && !restart.isBlank()) {
                await().atMost(Duration.ofMinutes(5)).until(() -> workload.iterationsDone() >= total * 85 / 100 || run.isDone());
                Process pgRestart = new ProcessBuilder("sh", "-c", restart).redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(new java.io.File("target/harness/pg-restart.log")))
                        .start();
                assertThat(pgRestart.waitFor()).as("pg_ctl restart").isZero();
                faults.add("PostgreSQL restart (pg_ctl restart -m fast)");
            }

            Workload.Summary summary = run.get();
            List<FencedRegister.Write> writes = register.log();
            List<String> violations = new ArrayList<>(summary.violations());
            violations.addAll(HistoryChecker.check(jdbc, tenant, writes));
            HistoryChecker.print("Fencing harness (3 instances)", summary, writes, violations, faults);

            assertThat(violations).isEmpty();
            assertThat(faults).hasSizeGreaterThanOrEqualTo(4);
            assertThat(summary.count("acquired")).isPositive();
        } finally {
            if (dropper != null) {
                dropper.close();
            }
            for (ServiceProcess instance : instances) {
                instance.close();
            }
        }
    }
}
