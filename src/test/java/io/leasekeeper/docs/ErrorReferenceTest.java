package io.leasekeeper.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.web.ErrorCode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The error reference, docs/reference/errors.md, and {@link ErrorCode} name the same codes with the same statuses,
 * so that neither can drift from the other: every constant has its row in the table at a glance and its own
 * section, each with the constant's HTTP status, and every code the reference names in code spans is a constant.
 */
class ErrorReferenceTest {

    private static final Path REFERENCE = Path.of("docs/reference/errors.md");

    /** A row of the table at a glance: {@code | [`CODE`](#code) | status | ...}. */
    private static final Pattern GLANCE_ROW = Pattern.compile("^\\| \\[`([A-Z_]+)`]\\(#([a-z_]+)\\) \\| ([^|]+)\\|");

    /** A code's section: {@code ### `CODE`}. */
    private static final Pattern SECTION = Pattern.compile("^### `([A-Z_]+)`\\s*$");

    /** A name in a code span that looks like a problem code: upper case and underscores, at least three letters. */
    private static final Pattern CODE_SPAN = Pattern.compile("`([A-Z][A-Z_]{2,})`");

    /** Upper-case words in code spans that are not problem codes. */
    private static final Set<String> NOT_CODES = Set.of("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS");

    @Test
    void everyCodeHasItsRowWithItsStatus() throws IOException {
        Map<String, String> rows = new LinkedHashMap<>();
        List<String> twice = new ArrayList<>();
        for (String line : Files.readAllLines(REFERENCE)) {
            Matcher row = GLANCE_ROW.matcher(line);
            if (row.find()) {
                assertThat(row.group(2)).as("the anchor of %s's row", row.group(1))
                        .isEqualTo(row.group(1).toLowerCase(Locale.ROOT));
                if (rows.put(row.group(1), row.group(3).strip()) != null) {
                    twice.add(row.group(1));
                }
            }
        }
        assertThat(twice).as("codes with two rows").isEmpty();
        for (ErrorCode code : ErrorCode.values()) {
            assertThat(rows).as("the table at a glance of %s", REFERENCE).containsKey(code.name());
            assertThat(rows.get(code.name())).as("the status of %s", code)
                    .startsWith(Integer.toString(code.status().value()));
        }
        assertThat(rows.keySet()).as("codes in the table that are not ErrorCode constants")
                .containsExactlyInAnyOrderElementsOf(names());
    }

    @Test
    void everyCodeHasItsSectionWithItsStatus() throws IOException {
        Map<String, String> sections = sections();
        for (ErrorCode code : ErrorCode.values()) {
            assertThat(sections).as("the sections of %s", REFERENCE).containsKey(code.name());
            assertThat(sections.get(code.name())).as("the first line of %s's section", code)
                    .startsWith("**" + code.status().value());
        }
        assertThat(sections.keySet()).as("sections of codes that are not ErrorCode constants")
                .containsExactlyInAnyOrderElementsOf(names());
    }

    @Test
    void everyCodeTheReferenceNamesIsAConstant() throws IOException {
        Set<String> named = new TreeSet<>();
        Matcher span = CODE_SPAN.matcher(Files.readString(REFERENCE));
        while (span.find()) {
            named.add(span.group(1));
        }
        named.removeAll(NOT_CODES);
        assertThat(named).as("codes named in %s", REFERENCE).containsExactlyInAnyOrderElementsOf(names());
    }

    @Test
    void theTypeUriIsTheOneTheReferenceDocuments() throws IOException {
        assertThat(ErrorCode.LEASE_HELD.typeUri()).isEqualTo("/problems/lease-held");
        assertThat(Files.readString(REFERENCE)).contains("`" + ErrorCode.LEASE_HELD.typeUri() + "`");
        for (ErrorCode code : ErrorCode.values()) {
            assertThat(code.typeUri()).isEqualTo("/problems/" + code.name().toLowerCase(Locale.ROOT).replace('_', '-'));
        }
    }

    /** Each code's section: its heading's code, and the first line of text under it. */
    private static Map<String, String> sections() throws IOException {
        Map<String, String> sections = new LinkedHashMap<>();
        List<String> lines = Files.readAllLines(REFERENCE);
        for (int i = 0; i < lines.size(); i++) {
            Matcher heading = SECTION.matcher(lines.get(i));
            if (heading.matches()) {
                int first = i + 1;
                while (first < lines.size() && lines.get(first).isBlank()) {
                    first++;
                }
                String previous = sections.put(heading.group(1), first < lines.size() ? lines.get(first) : "");
                assertThat(previous).as("a second section of %s", heading.group(1)).isNull();
            }
        }
        return sections;
    }

    private static List<String> names() {
        return Arrays.stream(ErrorCode.values()).map(Enum::name).toList();
    }
}
