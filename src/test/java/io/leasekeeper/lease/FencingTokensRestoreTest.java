package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.TestDatabase;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.util.FileSystemUtils;

/**
 * Issue 18, a real restore: a base backup of the running test cluster ({@code pg_basebackup}), more grants on
 * the original (the ones the backup will not have), then the backup started as a cluster of its own. Its
 * database has lost those grants and its sequence is behind their tokens; once its clock has passed the
 * second of the last lost grant, a grant on each key gets a token larger than every token that key was ever
 * given, the lost ones included. Needs the cluster's binaries: {@code .ci/run} exports
 * {@code LEASEKEEPER_TEST_PG_BIN} (and {@code LEASEKEEPER_TEST_PG_AS}, the prefix that runs them as the
 * postgres user); without them (a Testcontainers run) the test is skipped.
 */
class FencingTokensRestoreTest {

    private static final List<String> KEYS = List.of("a", "b", "c");
    private static final String GRANT = """
            WITH k AS (SELECT tenant, id FROM lease_key WHERE tenant = 'restore' AND target_value = :target)
            INSERT INTO lease (id, key_id, tenant, owner, holder, fencing_token, state, acquired_at, expires_at,
                               max_expires_at, ended_at, end_reason, ttl_seconds, max_lifetime_seconds)
            SELECT gen_random_uuid(), k.id, 'restore', 'o', 'h', next_fencing_token(k.tenant, k.id, lease_now()), 'released',
                   lease_now(), lease_now(), lease_now(), lease_now(), 'released', 1, 1
            FROM k RETURNING fencing_token
            """;

    @Test
    void afterARestoreFromABackupEveryKeysNextTokenOutranksTheTokensTheBackupNeverHad() throws Exception {
        String bin = System.getenv("LEASEKEEPER_TEST_PG_BIN");
        Assumptions.assumeTrue(bin != null && !bin.isBlank(), "LEASEKEEPER_TEST_PG_BIN not set");
        List<String> as = List.of(System.getenv().getOrDefault("LEASEKEEPER_TEST_PG_AS", "").trim().split("\\s+"))
                .stream().filter(s -> !s.isEmpty()).toList();
        TestDatabase.Connection db = TestDatabase.connection();
        String url = TestDatabase.newDatabase("restore");
        Path copy = Files.createTempDirectory("leasekeeper-restore");
        Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rwxrwxrwx")); // for the postgres user
        Path data = copy.resolve("data");
        boolean started = false;
        try {
            Flyway.configure().dataSource(url, db.username(), db.password()).locations("filesystem:db/migration")
                    .load().migrate();
            Map<String, Long> largest = new HashMap<>();
            long lastLostSecond;
            try (SingleConnectionDataSource original = new SingleConnectionDataSource(url, db.username(), db.password(), true)) {
                JdbcClient jdbc = JdbcClient.create(original);
                for (String key : KEYS) {
                    jdbc.sql("INSERT INTO lease_key (tenant, program, target_type, target_value, actor) "
                            + "VALUES ('restore', 'default', 'opaque', :target, 'job')").param("target", key).update();
                    largest.put(key, grant(jdbc, key));
                }

                URI server = URI.create(url.substring("jdbc:".length()));
                run(as, bin + "/pg_basebackup", "-D", data.toString(), "-h", server.getHost(),
                        "-p", String.valueOf(server.getPort()), "-U", db.username() == null ? "postgres" : db.username(),
                        "-X", "stream", "-c", "fast");
                // The lost grants in a later second than the backup: the sequence the backup has (PostgreSQL logs
                // a sequence up to 32 values ahead) is then below them, and only the floor can outrank them.
                long backupSecond = second(jdbc);
                await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(50))
                        .until(() -> second(jdbc) > backupSecond);
                for (int round = 0; round < 3; round++) { // the grants the backup does not have
                    for (String key : KEYS) {
                        largest.put(key, grant(jdbc, key));
                    }
                }
                lastLostSecond = jdbc.sql("SELECT floor(extract(epoch FROM max(acquired_at)))::bigint FROM lease")
                        .query(Long.class).single();
            }

            int port = freePort();
            run(as, bin + "/pg_ctl", "-D", data.toString(), "-l", copy.resolve("postgres.log").toString(), "-w",
                    "-o", "-p " + port + " -c listen_addresses=127.0.0.1 -k " + copy, "start");
            started = true;
            String restoredUrl = url.replace(":" + URI.create(url.substring(5)).getPort() + "/", ":" + port + "/");
            try (SingleConnectionDataSource restored = new SingleConnectionDataSource(restoredUrl, db.username(), db.password(), true)) {
                JdbcClient jdbc = JdbcClient.create(restored);
                assertThat(jdbc.sql("SELECT count(*) FROM lease").query(Long.class).single())
                        .as("the restored database has only the grants made before the backup").isEqualTo(KEYS.size());
                assertThat(jdbc.sql("SELECT last_value FROM fencing_token_seq").query(Long.class).single())
                        .as("and its sequence is behind the lost tokens")
                        .isLessThan(largest.values().stream().mapToLong(Long::longValue).min().orElseThrow());
                await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(50))
                        .until(() -> second(jdbc) > lastLostSecond);

                for (String key : KEYS) {
                    assertThat(grant(jdbc, key)).as("key %s after the restore", key).isGreaterThan(largest.get(key));
                }
            }
        } finally {
            if (started) {
                run(as, bin + "/pg_ctl", "-D", data.toString(), "-m", "immediate", "-w", "stop");
            }
            FileSystemUtils.deleteRecursively(copy);
            TestDatabase.dropDatabase(url);
        }
    }

    /** The whole seconds of the database's clock. */
    private static long second(JdbcClient jdbc) {
        return jdbc.sql("SELECT floor(extract(epoch FROM lease_now()))::bigint").query(Long.class).single();
    }

    private static long grant(JdbcClient jdbc, String key) {
        return jdbc.sql(GRANT).param("target", key).query(Long.class).single();
    }

    private static void run(List<String> as, String... command) throws IOException, InterruptedException {
        List<String> line = new ArrayList<>(as);
        line.addAll(List.of(command));
        Process process = new ProcessBuilder(line).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as("%s: %s", line, output).isZero();
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
