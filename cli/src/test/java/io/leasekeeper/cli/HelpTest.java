package io.leasekeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

/**
 * Help (cli.md; issue: {@code run --help} used to fail on its required options): {@code --help} and {@code -h} on
 * every command, anywhere among its options, and {@code leasekeeper help COMMAND}, each on standard output with
 * exit 0, listing the command's options, its exit statuses and an example; and every usage error points at a
 * help that works. Run in-process ({@link Leasekeeper#execute}); nothing here reaches a service.
 */
class HelpTest {

    private static final List<String> COMMANDS = List.copyOf(
            new CommandLine(new Leasekeeper()).getSubcommands().keySet());

    private final StandardStreams streams = new StandardStreams();

    @AfterEach
    void restore() {
        streams.close();
    }

    /** Runs the command line with emptied standard streams. */
    private int execute(String... args) {
        streams.reset();
        return Leasekeeper.execute(args);
    }

    private String out() {
        return streams.out();
    }

    private String err() {
        return streams.err();
    }

    @Test
    void everyCommandAnswersHelpAndMinusHAndTheHelpCommandWithItsOptionsStatusesAndAnExample() {
        assertThat(COMMANDS).contains("run", "acquire", "renew", "release", "inspect", "current", "list", "history",
                "revoke", "watch", "help");
        for (String command : COMMANDS) {
            CommandSpec spec = new CommandLine(new Leasekeeper()).getSubcommands().get(command).getCommandSpec();
            for (String[] asking : new String[][] {{command, "--help"}, {command, "-h"}, {"help", command}}) {
                String how = String.join(" ", asking);
                assertThat(execute(asking)).as(how).isZero();
                assertThat(err()).as(how).isEmpty();
                assertThat(out()).as(how).contains("Usage: leasekeeper " + command);
                spec.options().forEach(option -> assertThat(out()).as(how).contains(option.longestName()));
                if (!command.equals("help")) {
                    assertThat(out()).as(how).contains("Exit statuses:", "64 ", "65 ", "69 ", "77 ", "70 ")
                            .contains("Example:", "  leasekeeper " + command + " ");
                }
            }
        }
    }

    @Test
    void runsHelpListsEveryExitStatusOfTheContractAndEveryDefault() {
        assertThat(execute("help", "run")).isZero();

        assertThat(out().replaceAll("\\s+", " ")).contains("own ", "75 ", "76 ", "64 ", "65 ", "69 ", "77 ", "70 ")
                .contains("(default: 30s)", "(default: 0, answer", "(default: 0)", "(default: 5s)",
                        "<hostname>/<pid>", "(default: 75)", "-- ./invoice.sh");
        assertThat(exitStatuses("run")).containsKeys("own", "75", "76", "64", "65", "69", "77", "70");
        assertThat(exitStatuses("acquire")).containsKeys("0", "75", "64", "65", "69", "77", "70")
                .doesNotContainKeys("76", "own");
        assertThat(exitStatuses("release")).containsKeys("0", "64", "65", "69", "77", "70").doesNotContainKey("75");
    }

    @Test
    void helpAnywhereAmongTheOptionsWinsOverMissingWrongAndUnknownOnes() {
        for (String[] asking : new String[][] {
                {"run", "--target", "opaque:x", "--help"},
                {"run", "--ttl", "30 seconds", "-h"},
                {"run", "--no-such-option", "--help"},
                {"acquire", "--actor", "a", "-h", "--target"},
                {"revoke", "--lease-id", "not-a-uuid", "--help"},
                {"list", "--operation", "reindex", "--help"}}) {
            String how = String.join(" ", asking);
            assertThat(execute(asking)).as(how).isZero();
            assertThat(err()).as(how).isEmpty();
            assertThat(out()).as(how).startsWith("Usage: leasekeeper " + asking[0]);
        }
    }

    @Test
    void helpAfterTheDoubleDashIsTheCommandsArgument() {
        assertThat(execute("run", "--ttl", "30 seconds", "--", "ls", "--help")).isEqualTo(Exit.USAGE);

        assertThat(out()).isEmpty();
        assertThat(err()).startsWith("leasekeeper: ").contains("'30 seconds' is not a duration");
    }

    @Test
    void everyUsageErrorPointsAtAHelpThatWorks() {
        Pattern see = Pattern.compile("\\(see (leasekeeper(?: [a-z]+)?) --help\\)");
        for (String[] usage : new String[][] {
                {"run", "--actor", "a", "--", "true"},
                {"run", "--target", "opaque:x", "--actor", "a", "--wait", "forever", "--", "true"},
                {"acquire", "--target", "opaque:x", "--actor", "a", "--no-such-option"},
                {"revoke", "--lease-id", "00000000-0000-0000-0000-000000000001"},
                {"list", "--limit", "many"},
                {"help", "no-such-command"},
                {"no-such-command"},
                {}}) {
            String how = String.join(" ", usage);
            assertThat(execute(usage)).as(how).isEqualTo(Exit.USAGE);
            Matcher pointer = see.matcher(err());
            assertThat(pointer.find()).as(how + ": " + err()).isTrue();

            String[] help = (pointer.group(1).substring("leasekeeper".length()) + " --help").trim().split(" ");
            assertThat(execute(help)).as(String.join(" ", help)).isZero();
            assertThat(out()).startsWith("Usage: " + pointer.group(1));
        }
    }

    @Test
    void everyCommandOnAKeyTakesTheSameKeyOptions() {
        List<String> keyOptions = List.of("--target", "--actor", "--program", "--operation");
        List<String> onAKey = COMMANDS.stream().filter(command -> spec(command).findOption("--target") != null)
                .toList();

        assertThat(onAKey).containsExactlyInAnyOrder("run", "acquire", "current", "list");
        onAKey.forEach(command -> keyOptions.forEach(option ->
                assertThat(spec(command).findOption(option)).as(command + " " + option).isNotNull()));
    }

    private static CommandSpec spec(String command) {
        return new CommandLine(new Leasekeeper()).getSubcommands().get(command).getCommandSpec();
    }

    private static Map<String, String> exitStatuses(String command) {
        return spec(command).usageMessage().exitCodeList();
    }
}
