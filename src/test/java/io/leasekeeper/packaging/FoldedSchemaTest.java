package io.leasekeeper.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.TestDatabase;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * The fold of the schema into one versioned migration and the repeatable migrations of the functions (as the git tag
 * {@value #FOLDED} has them) made the same schema as the fifteen versioned migrations they were folded from (the tag
 * {@value #TAG}): two fresh databases, one migrated by each set, have the same catalogs ({@link SchemaCatalog}),
 * aspect by aspect. The one name that differs on purpose is the audit's first partition, {@value #OLD_FIRST_PARTITION}
 * there and {@value #FIRST_PARTITION} here (with the names PostgreSQL derives from it). Skipped, with its reason, only
 * where {@code git} or a tag is missing. Both sets are read from their tags, so the proof holds as the schema
 * changes after the fold; {@code db/migration} itself is what every other test migrates.
 */
class FoldedSchemaTest {

    static final String TAG = "schema-v1-v15";
    static final String FOLDED = "schema-folded";
    static final String OLD_FIRST_PARTITION = "lease_event_before_v7";
    static final String FIRST_PARTITION = "lease_event_first";

    @Test
    void theFoldedMigrationsMakeTheSchemaTheOldOnesMade(@TempDir Path old, @TempDir Path fold) throws Exception {
        List<String> files = migrationsOn(TAG, old);
        assertThat(files).as("the migrations on %s", TAG).hasSize(15)
                .allMatch(f -> f.matches("db/migration/V\\d+__.*\\.sql"));
        assertThat(migrationsOn(FOLDED, fold)).as("the migrations on %s", FOLDED)
                .contains("db/migration/V1__schema.sql").anyMatch(f -> f.matches("db/migration/R__.*\\.sql"));

        Map<String, Map<String, String>> before = schema("filesystem:" + old, OLD_FIRST_PARTITION);
        Map<String, Map<String, String>> folded = schema("filesystem:" + fold, FIRST_PARTITION);

        assertThat(folded.keySet()).isEqualTo(before.keySet());
        Map<String, List<String>> differences = new TreeMap<>();
        for (String aspect : before.keySet()) {
            assertThat(folded.get(aspect)).as(aspect).isNotEmpty();
            List<String> different = differences(before.get(aspect), folded.get(aspect));
            if (!different.isEmpty()) {
                differences.put(aspect, different);
            }
        }
        assertThat(differences).as("what differs, by aspect (the old migrations' first, then the folded ones')")
                .isEmpty();
    }

    /**
     * A fresh database migrated from {@code location}, described by its catalogs, its first partition of the audit
     * named {@value #FIRST_PARTITION}.
     */
    private static Map<String, Map<String, String>> schema(String location, String firstPartition) {
        TestDatabase.Connection cluster = TestDatabase.connection();
        String url = TestDatabase.newDatabase("fold");
        try {
            JdbcClient db = JdbcClient.create(new DriverManagerDataSource(url, cluster.username(), cluster.password()));
            Instant from = clock(db);
            Flyway.configure().dataSource(url, cluster.username(), cluster.password()).locations(location).load()
                    .migrate();
            Instant to = clock(db).plusMillis(1);
            Map<String, Map<String, String>> schema = new TreeMap<>();
            for (SchemaCatalog.Aspect aspect : SchemaCatalog.describe(db, from, to)) {
                Map<String, String> entries = new TreeMap<>();
                aspect.entries().forEach((name, description) -> entries.put(
                        name.replace(firstPartition, FIRST_PARTITION),
                        description == null ? null : description.replace(firstPartition, FIRST_PARTITION)));
                schema.put(aspect.name(), entries);
            }
            return schema;
        } finally {
            TestDatabase.dropDatabase(url);
        }
    }

    private static Instant clock(JdbcClient db) {
        return Instant.ofEpochMilli(db.sql("""
                SELECT CAST(extract(epoch FROM date_trunc('milliseconds', clock_timestamp())) * 1000 AS bigint)
                """).query(Long.class).single());
    }

    /** Each entry that is not the same in both: {@code name: old -> folded}, a missing one as {@code (none)}. */
    private static List<String> differences(Map<String, String> old, Map<String, String> folded) {
        List<String> differences = new ArrayList<>();
        TreeSet<String> names = new TreeSet<>(old.keySet());
        names.addAll(folded.keySet());
        for (String name : names) {
            String was = old.getOrDefault(name, "(none)");
            String is = folded.getOrDefault(name, "(none)");
            if (!was.equals(is)) {
                differences.add(name + ":\n    " + was + "\n -> " + is);
            }
        }
        return differences;
    }

    /** Writes the migrations the tag has into {@code into}; skips the test when git or the tag is missing. */
    private static List<String> migrationsOn(String tag, Path into) throws Exception {
        List<String> files = git("ls-tree", "--name-only", tag, "db/migration/");
        Assumptions.assumeTrue(files != null && !files.isEmpty(), "git, or the tag " + tag + ", is missing");
        for (String file : files) {
            Files.writeString(into.resolve(Path.of(file).getFileName()),
                    String.join("\n", git("show", tag + ":" + file)) + "\n");
        }
        return files;
    }

    /** The lines {@code git} prints for these arguments in the working directory, or null when it cannot. */
    private static List<String> git(String... arguments) throws InterruptedException {
        List<String> command = new ArrayList<>(List.of("git"));
        command.addAll(List.of(arguments));
        try {
            Process git = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            String out = new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return git.waitFor() == 0 ? out.lines().toList() : null;
        } catch (IOException e) {
            return null;
        }
    }
}
