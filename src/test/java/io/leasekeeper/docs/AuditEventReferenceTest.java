package io.leasekeeper.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.audit.EventType;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The audit reference, docs/reference/audit-events.md, lists every event type the service writes, and nothing
 * else: the types of {@link EventType}, which the history reads, and of the newest {@code lease_event_type} CHECK
 * of the migrations, which the database lets be written, are the same list, and the reference's table of types is
 * that list.
 */
class AuditEventReferenceTest {

    private static final Path REFERENCE = Path.of("docs/reference/audit-events.md");
    private static final Path MIGRATIONS = Path.of("db/migration");

    /** A row of the table of types: {@code | `TYPE` | ...}. */
    private static final Pattern TYPE_ROW = Pattern.compile("^\\| `([A-Z_]+)` \\|");

    /** The constraint on the event's type, as a migration states it. */
    private static final Pattern CHECK = Pattern.compile(
            "CONSTRAINT lease_event_type CHECK \\(type IN \\(([^)]*)\\)\\)");

    @Test
    void theReferenceListsEveryTypeOnce() throws IOException {
        List<String> rows = new ArrayList<>();
        for (String line : Files.readAllLines(REFERENCE)) {
            Matcher row = TYPE_ROW.matcher(line);
            if (row.find()) {
                rows.add(row.group(1));
            }
        }
        assertThat(rows).as("the event types in %s", REFERENCE).containsExactlyInAnyOrderElementsOf(types());
    }

    @Test
    void theDatabaseTakesExactlyTheseTypes() {
        String newest = null;
        for (Path migration : migrations()) {
            Matcher check = CHECK.matcher(read(migration));
            while (check.find()) {
                newest = check.group(1);
            }
        }
        assertThat(newest).as("a lease_event_type CHECK in %s", MIGRATIONS).isNotNull();
        List<String> allowed = Arrays.stream(newest.split(",")).map(t -> t.strip().replace("'", "")).toList();
        assertThat(allowed).as("the newest lease_event_type CHECK").containsExactlyInAnyOrderElementsOf(types());
    }

    /** The migrations in the order Flyway applies them: by version number. */
    private static List<Path> migrations() {
        try (Stream<Path> files = Files.list(MIGRATIONS)) {
            return files.filter(p -> p.getFileName().toString().matches("V\\d+__.*\\.sql"))
                    .sorted(Comparator.comparingInt(AuditEventReferenceTest::version))
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int version(Path migration) {
        String name = migration.getFileName().toString();
        return Integer.parseInt(name.substring(1, name.indexOf("__")));
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<String> types() {
        return Arrays.stream(EventType.values()).map(Enum::name).toList();
    }
}
