package io.leasekeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The launcher's AOT cache (docs/performance.md, "The command line's start"): the first run answers at once and
 * makes the cache in the background, the runs after it use it, and a cache that cannot be written or cannot be
 * read changes nothing a caller sees: the same answer, the same status, nothing on standard error.
 */
class CommandLineStartTest extends CommandLineTest {

    @Test
    void theFirstRunMakesTheCacheInTheBackgroundAndLaterRunsAnswerTheSame() throws Exception {
        Path cacheDir = dir.resolve("cache");
        Cli cached = cli(writer("alice")).withEnvironment("LEASEKEEPER_CACHE_DIR", cacheDir.toString());

        Cli.Ended first = cached.run("--version");
        await().atMost(Duration.ofMinutes(3)).until(() -> caches(cacheDir) == 1 && !locked(cacheDir));
        Cli.Ended withCache = cached.run("current", "--target", "opaque:nightly", "--actor", "report");
        String leaseId = acquire(writer("bob"), "nightly", "report", "pod-b", 60).body().get("leaseId").asString();
        Cli.Ended found = cached.run("current", "--target", "opaque:nightly", "--actor", "report");

        assertThat(first.status()).isZero();
        assertThat(first.out()).startsWith("leasekeeper ");
        assertThat(first.err()).isEmpty();
        assertThat(withCache.status()).as("no active lease yet").isEqualTo(70);
        assertThat(withCache.errLines()).singleElement().satisfies(line ->
                assertThat(line).startsWith("leasekeeper: 404 NO_ACTIVE_LEASE"));
        assertThat(found.status()).isZero();
        assertThat(found.err()).isEmpty();
        assertThat(JSON.readTree(found.out()).get("leaseId").asString()).isEqualTo(leaseId);
    }

    @Test
    void aCacheThatCannotBeWrittenOrReadChangesNothingTheCallerSees() throws Exception {
        Path notADirectory = Files.writeString(dir.resolve("file"), "x");
        Path corrupt = dir.resolve("corrupt");
        Cli unwritable = cli(writer("alice")).withEnvironment("LEASEKEEPER_CACHE_DIR", notADirectory.toString());
        Cli unreadable = cli(writer("alice")).withEnvironment("LEASEKEEPER_CACHE_DIR", corrupt.toString());
        unreadable.run("--version");
        await().atMost(Duration.ofMinutes(3)).until(() -> caches(corrupt) == 1 && !locked(corrupt));
        try (Stream<Path> files = Files.list(corrupt)) {
            for (Path cache : files.filter(f -> f.toString().endsWith(".aot")).toList()) {
                Files.writeString(cache, "not an AOT cache", StandardCharsets.UTF_8);
            }
        }

        for (Cli cli : new Cli[] {unwritable, unreadable}) {
            Cli.Ended version = cli.run("--version");
            Cli.Ended busy = cli.run("inspect", "--lease-id", "00000000-0000-0000-0000-000000000001");

            assertThat(version.status()).isZero();
            assertThat(version.out()).startsWith("leasekeeper ").hasLineCount(1);
            assertThat(version.err()).isEmpty();
            assertThat(busy.status()).isEqualTo(70);
            assertThat(busy.out()).isEmpty();
            assertThat(busy.errLines()).singleElement().satisfies(line ->
                    assertThat(line).startsWith("leasekeeper: 404 LEASE_NOT_FOUND"));
        }
    }

    private static long caches(Path cacheDir) throws Exception {
        if (!Files.isDirectory(cacheDir)) {
            return 0;
        }
        try (Stream<Path> files = Files.list(cacheDir)) {
            return files.filter(f -> f.getFileName().toString().matches("cli-\\d+-\\d+\\.aot")).count();
        }
    }

    private static boolean locked(Path cacheDir) throws Exception {
        try (Stream<Path> files = Files.list(cacheDir)) {
            return files.anyMatch(f -> f.getFileName().toString().endsWith(".lock"));
        }
    }
}
