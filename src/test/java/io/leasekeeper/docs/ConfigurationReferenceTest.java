package io.leasekeeper.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.config.LeasekeeperProperties;
import io.leasekeeper.support.SettingNames;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/reference/configuration.md names every setting of the service, and only settings that exist: a row
 * {@code `leasekeeper.lease.min-ttl` / `max-ttl`} names both (a bare {@code `max-ttl`} after a full name is its
 * sibling).
 */
class ConfigurationReferenceTest {

    private static final Path REFERENCE = Path.of("docs/reference/configuration.md");
    private static final Pattern TABLE_ROW_NAMES = Pattern.compile("^\\| ([^|]+) \\|");
    private static final Pattern CODE = Pattern.compile("`([a-z][\\w.-]*)`");

    @Test
    void everySettingOfTheServiceIsInTheReferenceAndEveryNamedOneExists() throws IOException {
        Set<String> settings = SettingNames.of(LeasekeeperProperties.class, "leasekeeper");
        Set<String> documented = documented(Files.readAllLines(REFERENCE));

        assertThat(settings).hasSizeGreaterThan(30);
        assertThat(new TreeSet<>(settings)).as("settings missing from " + REFERENCE)
                .allSatisfy(setting -> assertThat(documented).contains(setting));
        assertThat(documented.stream().filter(name -> name.startsWith("leasekeeper.")).toList())
                .as("settings in " + REFERENCE + " that the service does not have")
                .allSatisfy(name -> assertThat(settings).contains(name));
    }

    /** The names in the first cell of each table row, siblings completed from the full name before them. */
    static Set<String> documented(List<String> lines) {
        Set<String> names = new TreeSet<>();
        for (String line : lines) {
            Matcher row = TABLE_ROW_NAMES.matcher(line);
            if (!row.find()) {
                continue;
            }
            String parent = null;
            Matcher code = CODE.matcher(row.group(1));
            while (code.find()) {
                String name = code.group(1);
                if (name.contains(".")) {
                    names.add(name);
                    parent = name.substring(0, name.lastIndexOf('.') + 1);
                } else if (parent != null) {
                    names.add(parent + name);
                }
            }
        }
        return names;
    }
}
