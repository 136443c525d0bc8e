package io.leasekeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.CuttableProxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@code leasekeeper run} against the whole service, with real child processes (cli.md, "leasekeeper run" and
 * "Exit statuses"): the lease in COMMAND's environment, COMMAND's own status, a busy key, a wait ended by a
 * release, and a loss (an admin's revoke, a silent network) stopping COMMAND and its descendants.
 */
class CommandLineRunTest extends CommandLineTest {

    private static final Duration END = Duration.ofSeconds(30);

    @Test
    void commandGetsTheLeaseInItsEnvironmentAndItsStatusIsReturnedAfterTheRelease() throws Exception {
        Path seen = dir.resolve("seen");
        Cli.Ended ended = cli(writer("alice")).run("run", "--target", "opaque:nightly", "--actor", "report",
                "--", "sh", "-c", "echo \"$LEASEKEEPER_LEASE_ID $LEASEKEEPER_FENCING_TOKEN $LEASEKEEPER_KEY\" > "
                        + seen + "; exit 3");

        assertThat(ended.status()).isEqualTo(3);
        assertThat(ended.out()).as("standard output carries results only").isEmpty();
        String[] env = Files.readString(seen).trim().split(" ");
        Map<String, Object> lease = jdbc.sql("""
                SELECT l.state, l.fencing_token, l.holder FROM lease l WHERE l.id = :id
                """).param("id", UUID.fromString(env[0])).query().singleRow();
        assertThat(lease.get("fencing_token")).isEqualTo(Long.parseLong(env[1]));
        assertThat(env[2]).isEqualTo(tenant + "/default/opaque:nightly/report");
        assertThat(lease.get("state")).as("released when the command ended").isEqualTo("released");
        assertThat((String) lease.get("holder")).as("default holder <hostname>/<pid>").matches(".+/\\d+");
    }

    @Test
    void theCommandDoesNotGetTheCommandLinesToken() throws Exception {
        Path seen = dir.resolve("seen");
        Cli.Ended ended = cli(writer("alice")).run("run", "--target", "opaque:nightly", "--actor", "report",
                "--", "sh", "-c", "echo \"token=${LEASEKEEPER_TOKEN-unset} lease=${LEASEKEEPER_LEASE_ID-unset}\" > "
                        + seen);

        assertThat(ended.status()).isZero();
        String env = Files.readString(seen).trim();
        assertThat(env).as("the lease is there, the bearer token is not").startsWith("token=unset lease=")
                .doesNotEndWith("lease=unset");
    }

    @Test
    void aCommandEndedBySignalGivesOneHundredTwentyEightPlusTheSignal() throws Exception {
        Cli.Ended ended = cli(writer("alice")).run("run", "--target", "opaque:nightly", "--actor", "report",
                "--", "sh", "-c", "kill -TERM $$");

        assertThat(ended.status()).isEqualTo(128 + 15);
    }

    @Test
    void aBusyKeyExitsSeventyFiveNamingItsHolderWithoutRunningTheCommand() throws Exception {
        acquire(writer("bob"), "nightly", "report", "pod-b", 60);
        Path ran = dir.resolve("ran");

        Cli.Ended ended = cli(writer("alice")).run("run", "--target", "opaque:nightly", "--actor", "report",
                "--", "touch", ran.toString());
        Cli.Ended custom = cli(writer("alice")).run("run", "-E", "9", "--target", "opaque:nightly", "--actor",
                "report", "--", "touch", ran.toString());

        assertThat(ended.status()).isEqualTo(75);
        assertThat(ended.errLines()).singleElement().satisfies(line -> assertThat(line)
                .startsWith("leasekeeper: ").contains("LEASE_HELD", "owner bob", "holder pod-b", "until 20"));
        assertThat(custom.status()).isEqualTo(9);
        assertThat(ran).doesNotExist();
    }

    @Test
    void aLockDelayedKeyExitsSeventyFiveWithTheDelaysEnd() throws Exception {
        Map<String, Object> body = new java.util.HashMap<>(Api.acquireBody("nightly", "report", "pod-b", 60));
        body.put("lockDelaySeconds", 60);
        String leaseId = api.post("/v1/leases", writer("bob"), body).body().get("leaseId").asString();
        assertThat(revoke(admin("root"), leaseId, "stuck").status()).isEqualTo(200);

        Cli.Ended ended = cli(writer("alice")).run("run", "--target", "opaque:nightly", "--actor", "report",
                "--", "true");

        assertThat(ended.status()).isEqualTo(75);
        assertThat(ended.errLines()).singleElement().satisfies(line -> assertThat(line)
                .startsWith("leasekeeper: ").contains("LOCK_DELAYED", "lock-delayed until 20"));
    }

    @Test
    void aWaitingRunIsWokenByTheHoldersRelease() throws Exception {
        Api.Response held = acquire(writer("bob"), "nightly", "report", "pod-b", 60);
        Path ran = dir.resolve("ran");

        Cli.Running waiting = cli(writer("alice")).start("run", "--wait", "40s", "--target", "opaque:nightly",
                "--actor", "report", "--", "touch", ran.toString());
        await().atMost(END).until(() -> jdbc.sql("SELECT count(*) FROM lease_waiter WHERE tenant = :t")
                .param("t", tenant).query(Long.class).single() == 1);
        assertThat(ran).as("not run while the key is held").doesNotExist();
        assertThat(release(writer("bob"), held.body().get("leaseId").asString(),
                held.body().get("fencingToken").asLong()).status()).isEqualTo(200);

        Cli.Ended ended = waiting.awaitEnd(END);
        assertThat(ended.status()).as(ended.err()).isEqualTo(0);
        assertThat(ran).exists();
    }

    @Test
    void aRevokeStopsTheCommandAndItsDescendantsAndExitsSeventySix() throws Exception {
        Path pids = dir.resolve("pids");
        // TTL 60 s: the first renew is 20 s away and the local deadline 59 s; only the watch tells of the revoke.
        Cli.Running running = cli(writer("alice")).start("run", "--ttl", "60s", "--target", "opaque:nightly",
                "--actor", "report", "--", "sh", "-c", "sleep 300 & echo $$ $! > " + pids + ".tmp; mv " + pids
                        + ".tmp " + pids + "; wait");
        long[] pid = awaitPids(pids);
        revoke(admin("root"), activeLease(), "maintenance");

        Cli.Ended ended = running.awaitEnd(END);
        assertThat(ended.status()).isEqualTo(76);
        assertThat(ended.errLines()).singleElement().satisfies(line -> assertThat(line)
                .startsWith("leasekeeper: ").contains("revoked"));
        for (long p : pid) {
            await("process " + p + " stopped").atMost(Duration.ofSeconds(10))
                    .until(() -> ProcessHandle.of(p).map(h -> !h.isAlive()).orElse(true));
        }
    }

    @Test
    void aCommandThatIgnoresSigtermIsKilledKillAfterLater() throws Exception {
        Path pids = dir.resolve("pids");
        Path terms = dir.resolve("terms");
        Cli.Running running = cli(writer("alice")).start("run", "--ttl", "60s", "--kill-after", "2s", "--target",
                "opaque:nightly", "--actor", "report", "--", "sh", "-c", "trap 'echo term >> " + terms + "' TERM; echo $$ > "
                        + pids + ".tmp; mv " + pids + ".tmp " + pids + "; while :; do sleep 0.1; done");
        long[] pid = awaitPids(pids);
        revoke(admin("root"), activeLease(), "maintenance");
        long revoked = System.nanoTime();

        Cli.Ended ended = running.awaitEnd(END);
        long tookMillis = (System.nanoTime() - revoked) / 1_000_000;
        assertThat(ended.status()).isEqualTo(76);
        assertThat(Files.readString(terms, StandardCharsets.UTF_8)).as("SIGTERM came first").contains("term");
        assertThat(tookMillis).as("SIGKILL no sooner than --kill-after after SIGTERM").isGreaterThanOrEqualTo(2_000);
        assertThat(ProcessHandle.of(pid[0]).map(ProcessHandle::isAlive).orElse(false)).isFalse();
    }

    @Test
    void aSilentNetworkStopsTheCommandAtTheLocalDeadlineBeforeTheServiceExpiresTheLease() throws Exception {
        try (CuttableProxy proxy = new CuttableProxy("127.0.0.1", port)) {
            Path pids = dir.resolve("pids");
            Cli.Running running = new Cli(proxy.port(), writer("alice"), dir).start("run", "--ttl", "6s", "--target",
                    "opaque:nightly", "--actor", "report", "--", "sh", "-c", "echo $$ > " + pids + ".tmp; mv " + pids
                            + ".tmp " + pids + "; sleep 300");
            awaitPids(pids);
            String leaseId = activeLease();
            proxy.stall(); // every byte swallowed: renewals and the watch hang

            Cli.Ended ended = running.awaitEnd(END);
            boolean stillActive = jdbc.sql("SELECT expires_at > lease_now() FROM lease WHERE id = CAST(:id AS uuid)")
                    .param("id", leaseId).query(Boolean.class).single();
            assertThat(ended.status()).isEqualTo(76);
            assertThat(ended.errLines()).singleElement().satisfies(line -> assertThat(line)
                    .startsWith("leasekeeper: ").contains("local deadline"));
            assertThat(stillActive).as("stopped before the service's expiry").isTrue();
        }
    }

    @Test
    void sigtermAndSigintToLeasekeeperArePassedOnAndTheLeaseIsReleased() throws Exception {
        for (String signal : new String[] {"TERM", "INT"}) {
            Path pids = dir.resolve("pids-" + signal);
            Cli.Running running = cli(writer("alice")).start("run", "--target", "opaque:nightly", "--actor", "report",
                    "--", "sh", "-c", "trap 'exit 7' " + signal + "; echo $$ > " + pids + ".tmp; mv " + pids + ".tmp "
                            + pids + "; while :; do sleep 0.1; done");
            awaitPids(pids);
            String leaseId = activeLease();
            new ProcessBuilder("kill", "-" + signal, Long.toString(running.process.pid())).start().waitFor();

            Cli.Ended ended = running.awaitEnd(END);
            assertThat(ended.status()).as(signal).isEqualTo(7);
            assertThat(jdbc.sql("SELECT state FROM lease WHERE id = CAST(:id AS uuid)").param("id", leaseId)
                    .query(String.class).single()).as(signal).isEqualTo("released");
        }
    }

    private String activeLease() {
        return jdbc.sql("SELECT id::text FROM lease WHERE tenant = :t AND state = 'active'").param("t", tenant)
                .query(String.class).single();
    }

    /** The pids a command wrote (atomically, by a rename) once it started. */
    private static long[] awaitPids(Path file) throws Exception {
        await().atMost(END).until(() -> Files.exists(file));
        String[] words = Files.readString(file).trim().split(" ");
        long[] pids = new long[words.length];
        for (int i = 0; i < words.length; i++) {
            pids[i] = Long.parseLong(words[i]);
        }
        return pids;
    }
}
