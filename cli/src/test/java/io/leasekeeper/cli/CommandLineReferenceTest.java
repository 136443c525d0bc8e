package io.leasekeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

/**
 * The command line's reference, docs/reference/command-line.md, says what the command line is: read from
 * picocli's model of it, every option name (short and long) of every command is in the first column of a table
 * of that command's section ({@code `leasekeeper NAME`} in its heading), or, for an option every command has, of
 * "Options of every command"; every positional is named in the command's section; every option a command's table
 * lists is one the command has; and every exit status
 * of the command line's contract, as {@link Exit} and the help ({@link HelpText}) give them, has its
 * row in "Exit statuses". Nothing here reaches a service.
 */
class CommandLineReferenceTest {

    private static final String COMMON = "Options of every command";
    private static final String EXIT_STATUSES = "Exit statuses";

    /** The statuses of the contract's table besides COMMAND's own. */
    private static final Set<Integer> CONTRACT_STATUSES = Set.of(75, 76, 64, 65, 69, 77, 70);

    private static final Pattern HEADING = Pattern.compile("^(#{1,6})\\s+(.*?)\\s*$");
    /** An option name in a table's first cell: {@code `--ttl DURATION`}, {@code `-E`}. */
    private static final Pattern LISTED_OPTION = Pattern.compile("`(--?[A-Za-z][\\w-]*)");

    private final Document doc = Document.read(reference());
    private final CommandSpec root = new CommandLine(new Leasekeeper()).getCommandSpec();

    @Test
    void everyOptionAndPositionalOfEveryCommandIsInItsSection() {
        Set<String> shared = sharedOptionNames();
        assertThat(shared).as("the options every command has").contains("--url", "--token-file", "--help");
        List<String> missing = new ArrayList<>();
        Set<String> common = listedOptions(doc.section(COMMON));
        for (OptionSpec option : root.options()) {
            for (String name : option.names()) {
                if (!common.contains(name)) {
                    missing.add("leasekeeper " + name + " (in \"" + COMMON + "\")");
                }
            }
        }
        for (Map.Entry<String, CommandLine> entry : root.subcommands().entrySet()) {
            String command = entry.getKey();
            CommandSpec spec = entry.getValue().getCommandSpec();
            String section = doc.commandSection(command);
            if (section == null) {
                missing.add("a section headed `leasekeeper " + command + "`");
                continue;
            }
            Set<String> listed = listedOptions(section);
            for (OptionSpec option : spec.options()) {
                for (String name : option.names()) {
                    boolean inCommon = shared.contains(name);
                    if (!(inCommon ? common : listed).contains(name)) {
                        missing.add(command + " " + name + (inCommon ? " (in \"" + COMMON + "\")" : ""));
                    }
                }
            }
            for (PositionalParamSpec positional : spec.positionalParameters()) {
                if (!mentions(section, positional.paramLabel())) {
                    missing.add(command + " " + positional.paramLabel());
                }
            }
        }
        assertThat(missing).as("options and positionals missing from docs/reference/command-line.md").isEmpty();
    }

    @Test
    void everyOptionTheReferenceListsIsOneTheCommandHas() {
        Set<String> shared = sharedOptionNames();
        List<String> unknown = new ArrayList<>();
        for (Map.Entry<String, CommandLine> entry : root.subcommands().entrySet()) {
            String section = doc.commandSection(entry.getKey());
            if (section == null) {
                continue; // the test above names it
            }
            Set<String> names = new TreeSet<>(shared);
            entry.getValue().getCommandSpec().options().forEach(o -> names.addAll(List.of(o.names())));
            for (String name : listedOptions(section)) {
                if (!names.contains(name)) {
                    unknown.add(entry.getKey() + " " + name);
                }
            }
        }
        assertThat(unknown).as("options the reference lists that the command does not have").isEmpty();
    }

    @Test
    void everyExitStatusOfTheContractHasItsRow() throws IllegalAccessException {
        Set<Integer> coded = new TreeSet<>();
        for (Field field : Exit.class.getDeclaredFields()) {
            if (Modifier.isStatic(field.getModifiers()) && field.getType() == int.class) {
                field.setAccessible(true);
                coded.add(field.getInt(null));
            }
        }
        assertThat(coded).as("the statuses Exit gives").isEqualTo(new TreeSet<>(CONTRACT_STATUSES));

        Set<String> statuses = new LinkedHashSet<>();
        CONTRACT_STATUSES.forEach(status -> statuses.add(status.toString()));
        for (Field field : HelpText.class.getDeclaredFields()) {
            if (Modifier.isStatic(field.getModifiers()) && field.getType() == String.class) {
                field.setAccessible(true);
                Matcher m = Pattern.compile("^(\\d+|own):").matcher((String) field.get(null));
                if (m.find()) {
                    statuses.add(m.group(1));
                }
            }
        }
        assertThat(statuses).as("the statuses the help lists").contains("0", "own", "75", "76");

        List<String> rows = firstCells(doc.section(EXIT_STATUSES));
        List<String> missing = new ArrayList<>();
        for (String status : statuses) {
            String row = status.equals("own") ? "COMMAND's own" : status;
            if (rows.stream().noneMatch(cell -> cell.equals(row) || cell.startsWith(row + " "))) {
                missing.add(row);
            }
        }
        assertThat(missing).as("exit statuses without a row in \"" + EXIT_STATUSES + "\"").isEmpty();
    }

    /** The names of the options every command but {@code help} has: documented once, in "Options of every command". */
    private Set<String> sharedOptionNames() {
        Set<String> shared = null;
        for (Map.Entry<String, CommandLine> entry : root.subcommands().entrySet()) {
            if (entry.getKey().equals("help")) {
                continue;
            }
            Set<String> names = new TreeSet<>();
            entry.getValue().getCommandSpec().options().forEach(o -> names.addAll(List.of(o.names())));
            if (shared == null) {
                shared = names;
            } else {
                shared.retainAll(names);
            }
        }
        return shared;
    }

    /** The option names the first cells of {@code section}'s tables list, one row per option. */
    private static Set<String> listedOptions(String section) {
        Set<String> names = new TreeSet<>();
        for (String cell : firstCells(section)) {
            Matcher m = LISTED_OPTION.matcher(cell);
            while (m.find()) {
                names.add(m.group(1));
            }
        }
        return names;
    }

    /** Whether {@code text} names {@code word} as a whole: {@code --wait} is not found in {@code --wait-for}. */
    private static boolean mentions(String text, String word) {
        return text != null
                && Pattern.compile("(?<![\\w-])" + Pattern.quote(word) + "(?![\\w-])").matcher(text).find();
    }

    /** The first cell of every table row of {@code section}, backticks kept, header and rule rows left out. */
    private static List<String> firstCells(String section) {
        List<String> cells = new ArrayList<>();
        if (section == null) {
            return cells;
        }
        String[] lines = section.split("\n");
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].strip();
            boolean header = i + 1 < lines.length && lines[i + 1].strip().startsWith("|---");
            if (line.startsWith("|") && !line.startsWith("|---") && !header) {
                cells.add(line.substring(1).split("\\|", 2)[0].strip());
            }
        }
        return cells;
    }

    /** docs/reference/command-line.md of this repository, found from the module's folder or the repository's. */
    private static Path reference() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path doc = dir.resolve("docs/reference/command-line.md");
            if (Files.isRegularFile(doc)) {
                return doc;
            }
        }
        throw new AssertionError("no docs/reference/command-line.md above " + Path.of("").toAbsolutePath());
    }

    /** A Markdown file's sections: a heading and its text, up to the next heading of the same or a higher level. */
    private record Document(List<String> lines, List<int[]> headings) {

        static Document read(Path file) {
            try {
                List<String> lines = Files.readAllLines(file);
                List<int[]> headings = new ArrayList<>(); // {line, level}
                boolean fenced = false;
                for (int i = 0; i < lines.size(); i++) {
                    String line = lines.get(i);
                    if (line.strip().startsWith("```")) {
                        fenced = !fenced;
                    }
                    Matcher m = HEADING.matcher(line);
                    if (!fenced && m.matches()) {
                        headings.add(new int[] {i, m.group(1).length()});
                    }
                }
                return new Document(lines, headings);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        /** The section whose heading is {@code title}, or null. */
        String section(String title) {
            return sectionWhere(heading -> heading.equals(title));
        }

        /** The section whose heading names {@code `leasekeeper COMMAND`} or {@code `leasekeeper COMMAND …`}, or null. */
        String commandSection(String command) {
            String named = "`leasekeeper " + command;
            return sectionWhere(heading -> heading.contains(named + "`") || heading.contains(named + " "));
        }

        private String sectionWhere(java.util.function.Predicate<String> heading) {
            for (int h = 0; h < headings.size(); h++) {
                int start = headings.get(h)[0];
                int level = headings.get(h)[1];
                Matcher m = HEADING.matcher(lines.get(start));
                if (m.matches() && heading.test(m.group(2))) {
                    int end = lines.size();
                    for (int next = h + 1; next < headings.size(); next++) {
                        if (headings.get(next)[1] <= level) {
                            end = headings.get(next)[0];
                            break;
                        }
                    }
                    return String.join("\n", lines.subList(start, end));
                }
            }
            return null;
        }
    }
}
