package io.leasekeeper.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.CuttableProxy;
import io.leasekeeper.support.ServiceProcess;
import io.leasekeeper.support.TestDatabase;
import io.leasekeeper.support.TestTokens;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * Three service processes from the built jar against one PostgreSQL, the fencing workload spread across
 * them, and faults injected in rounds while it runs: kill -9 of an instance and its restart, every
 * database connection of the service terminated, an instance's answers dropped after commit, and (when
 * LEASEKEEPER_TEST_PG_RESTART names the command) a PostgreSQL restart. Faults are paced by the
 * workload's progress, not by the clock. The short run is {@code harness.rounds} rounds (default 2); with
 * {@code harness.duration} (say {@code 10m}) rounds repeat until that much time has passed. Run with
 * {@code ./mvnw verify -Pharness}; see docs/guides/harness.md.
 */
class MultiInstanceHarnessIT {

    private static final int CLIENTS = 24;
    /** Leases the workload is granted between two faults: five hand-overs of each hot key. */
    private static final int GAP = 5 * Workload.KEYS.size();

    private final List<ServiceProcess> instances = new ArrayList<>();
    private final List<String> faults = new ArrayList<>();
    private final List<FaultWindow> windows = new ArrayList<>();
    private Workload workload;
    private CompletableFuture<Workload.Summary> run;

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
        String pgRestart = System.getenv("LEASEKEEPER_TEST_PG_RESTART");
        boolean restartsPostgres = pgRestart != null && !pgRestart.isBlank();
        Duration duration = Duration.parse("PT" + System.getProperty("harness.duration", "0s").toUpperCase());
        int rounds = Integer.getInteger("harness.rounds", 2);
        long began = System.nanoTime();
        CuttableProxy dropper = null;
        try {
            for (int i = 0; i < 3; i++) {
                ServiceProcess instance = ServiceProcess.ofJar(ServiceProcess.builtJar(),
                        Path.of("target", "harness", "instance-" + i + ".log"), arguments);
                instance.start();
                instances.add(instance);
            }
            FencedRegister register = FencedRegister.create(jdbc, db);
            // Instance 2 is reached through a proxy that can drop its answers after the work is done.
            dropper = new CuttableProxy("127.0.0.1", instances.get(2).port());
            List<Integer> ports = List.of(instances.get(0).port(), instances.get(1).port(), dropper.port());
            workload = new Workload(ports, register, tenant);
            run = CompletableFuture.supplyAsync(() -> {
                try {
                    return workload.run(CLIENTS, Integer.MAX_VALUE);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            long start = System.nanoTime();

            for (int round = 1; round <= rounds || System.nanoTime() - start < duration.toNanos(); round++) {
                // kill -9 (SIGKILL: no shutdown, in-flight transactions die with their connections) and restart.
                int index = (round - 1) % 3;
                ServiceProcess victim = instances.get(index);
                fault("kill -9 and restart of instance " + index + " #" + round, false, () -> {
                    victim.kill();
                    victim.start();
                });
                fault("pg_terminate_backend of the service's connections #" + round, true, () -> {
                    int terminated = jdbc.sql("""
                            SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                            WHERE datname = current_database() AND pid <> pg_backend_pid()
                              AND backend_type = 'client backend'
                            """).query(Integer.class).single();
                    assertThat(terminated).as("service connections terminated").isPositive();
                });
                CuttableProxy proxy = dropper;
                fault("answers of instance 2 dropped after commit #" + round, false, () -> {
                    proxy.dropResponses(true);
                    progress(GAP);
                    proxy.dropResponses(false);
                });
                if (restartsPostgres) {
                    fault("PostgreSQL restart (pg_ctl restart -m fast) #" + round, true, () -> {
                        Process restart = new ProcessBuilder("sh", "-c", pgRestart).redirectErrorStream(true)
                                .redirectOutput(ProcessBuilder.Redirect.appendTo(new File("target/harness/pg-restart.log")))
                                .start();
                        assertThat(restart.waitFor()).as("pg_ctl restart").isZero();
                    });
                }
            }
            progress(GAP);
            workload.stop();
            Workload.Summary summary = run.get();
            List<FencedRegister.Write> writes = register.log();
            List<String> violations = new ArrayList<>(summary.violations());
            violations.addAll(HistoryChecker.check(jdbc, tenant, writes));
            violations.addAll(HistoryChecker.checkServerErrors(summary, windows));
            faults.add(summary.count("paused past TTL") + " client pauses past the TTL");
            HistoryChecker.print(String.format("Fencing harness (3 instances, %d clients, %d s)", CLIENTS,
                    Duration.ofNanos(System.nanoTime() - began).toSeconds()), summary, writes, violations, faults, windows);

            assertThat(violations).as(() -> serverLogOf(violations)).isEmpty();
            assertThat(windows).extracting(FaultWindow::name).anyMatch(n -> n.startsWith("kill -9"))
                    .anyMatch(n -> n.startsWith("pg_terminate_backend")).anyMatch(n -> n.startsWith("answers of"));
            if (restartsPostgres) {
                assertThat(windows).extracting(FaultWindow::name).anyMatch(n -> n.startsWith("PostgreSQL restart"));
            }
            assertThat(summary.count("paused past TTL")).isPositive();
            assertThat(summary.count("acquire replayed")).isPositive();
            assertThat(summary.count("acquired by a waiting acquire")).isPositive();
            assertThat(summary.count("watch ended by release")).isPositive();
            assertThat(writes.stream().filter(w -> w.stale() && !w.accepted())).as("stale writes fenced off").isNotEmpty();
        } finally {
            if (workload != null) {
                workload.stop();
            }
            if (dropper != null) {
                dropper.close();
            }
            for (ServiceProcess instance : instances) {
                instance.close();
            }
        }
    }

    /**
     * What the instances logged for the 500s among the violations: each answer names its traceId, which every log
     * line of its request carries; the entry (an ERROR line and its stack trace) tells why, in CI's output.
     */
    private static String serverLogOf(List<String> violations) {
        StringBuilder logged = new StringBuilder("server log of the violations' traces:");
        Matcher traces = Pattern.compile("\"traceId\":\"([0-9a-f]{32})\"").matcher(String.join("\n", violations));
        List<String> traceIds = new ArrayList<>();
        while (traces.find()) {
            if (!traceIds.contains(traces.group(1))) {
                traceIds.add(traces.group(1));
            }
        }
        for (int i = 0; i < 3; i++) {
            Path log = Path.of("target", "harness", "instance-" + i + ".log");
            List<String> lines;
            try {
                lines = Files.exists(log) ? Files.readAllLines(log) : List.of();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            for (int at = 0; at < lines.size(); at++) {
                String line = lines.get(at);
                if (traceIds.stream().anyMatch(line::contains) && (line.contains(" ERROR ") || line.contains(" WARN "))) {
                    logged.append("\n").append(log.getFileName()).append(": ").append(line);
                    // its stack trace: the lines up to the next log line (which starts with a timestamp), at most 60
                    for (int next = at + 1; next < lines.size() && next <= at + 60
                            && !lines.get(next).matches("^\\d{4}-\\d\\d-\\d\\dT.*"); next++) {
                        logged.append("\n  ").append(lines.get(next));
                    }
                }
            }
        }
        return logged.toString();
    }

    private interface Injection {
        void inject() throws Exception;
    }

    /**
     * Waits for {@link #GAP} more grants, then injects the fault and records its window. After a
     * database outage, every instance must report ready again within {@link FaultWindow#RECOVERY}.
     */
    private void fault(String name, boolean databaseOutage, Injection injection) throws Exception {
        progress(GAP);
        long start = System.nanoTime();
        injection.inject();
        long end = System.nanoTime();
        windows.add(new FaultWindow(name, start, end, databaseOutage));
        String took = String.format(" (%d ms", Duration.ofNanos(end - start).toMillis());
        if (databaseOutage) {
            awaitEveryInstanceReady();
            took += String.format(", all ready %d ms after", Duration.ofNanos(System.nanoTime() - end).toMillis());
        }
        faults.add(name + took + ")");
    }

    /** Waits until the workload has been granted {@code leases} more (or has failed). */
    private void progress(int leases) {
        long target = workload.grants() + leases;
        await().atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofMillis(50))
                .until(() -> workload.grants() >= target || run.isDone());
        if (run.isDone()) {
            run.join(); // rethrows what stopped the workload early
        }
    }

    /** The service recovers by itself: every instance ready again within 10 s of the database's return. */
    private void awaitEveryInstanceReady() {
        for (ServiceProcess instance : instances) {
            Api api = new Api(instance.managementPort());
            await().atMost(FaultWindow.RECOVERY).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                    .until(() -> api.get("/actuator/health/readiness", null).status() == 200);
        }
    }
}
