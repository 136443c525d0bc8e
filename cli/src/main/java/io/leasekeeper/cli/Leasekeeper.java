package io.leasekeeper.cli;

import io.leasekeeper.client.ProblemException;
import io.leasekeeper.client.ServiceUnavailableException;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code leasekeeper} command line (contract: cli.md): {@code run} holds a lease while a command runs, and
 * one command per API call. Standard output carries results only; every diagnostic is one line on standard
 * error starting with {@code leasekeeper: }. Exit statuses are the contract's ({@link Exit}).
 */
@Command(name = "leasekeeper", mixinStandardHelpOptions = true, versionProvider = Leasekeeper.Version.class,
        description = "Leases with fencing tokens from a Leasekeeper service.",
        subcommands = {RunCommand.class, Calls.Acquire.class, Calls.Renew.class, Calls.Release.class,
                Calls.Inspect.class, Calls.Current.class, Calls.ListLeases.class, Calls.History.class,
                Calls.Revoke.class, Calls.Watch.class, CommandLine.HelpCommand.class},
        exitCodeListHeading = HelpText.EXIT_STATUSES, exitCodeList = {HelpText.COMMAND_STATUS, HelpText.BUSY_RUN,
                HelpText.LOST, HelpText.USAGE, HelpText.DATA, HelpText.UNAVAILABLE, HelpText.NO_PERMISSION,
                HelpText.SOFTWARE},
        footerHeading = HelpText.EXAMPLE, footer = {"  leasekeeper help run",
                "  leasekeeper run --target opaque:billing/nightly --actor invoicer -- ./invoice.sh",
                "", "Each command's options, exit statuses and an example: leasekeeper help COMMAND,"
                        + " or leasekeeper COMMAND --help."})
public final class Leasekeeper implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "a command is required: "
                + String.join(", ", spec.subcommands().keySet()));
    }

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    static int execute(String... args) {
        CommandLine cli = new CommandLine(new Leasekeeper());
        cli.setParameterExceptionHandler((e, arguments) -> {
            CommandLine failed = e.getCommandLine();
            if (HelpText.asked(arguments)) {
                failed.usage(failed.getOut());
                return 0;
            }
            diagnose(e.getMessage() + " (see " + failed.getCommandSpec().qualifiedName() + " --help)");
            return Exit.USAGE;
        });
        cli.setExecutionExceptionHandler((e, ignored, parsed) -> failed(e));
        return cli.execute(args);
    }

    /** The exit status of a call that failed, after its one line on standard error. */
    static int failed(Exception e) {
        if (e instanceof ProblemException problem) {
            diagnose(Exit.describe(problem));
            return problem instanceof ProblemException.Busy ? Exit.BUSY : Exit.of(problem.problem().status());
        }
        if (e instanceof ServiceUnavailableException) {
            diagnose(e.getMessage());
            return Exit.UNAVAILABLE;
        }
        if (e instanceof CommandLine.ParameterException usage) {
            diagnose(usage.getMessage());
            return Exit.USAGE;
        }
        diagnose("failed: " + e);
        return Exit.SOFTWARE;
    }

    /**
     * One line on standard error, read by a person: a line break in {@code message} becomes a space, and every
     * character that does not show itself, or that standard error's encoding cannot write ({@link Visible}), is
     * written as its escape, so that a key, holder or reason reads as it is stored.
     */
    static void diagnose(String message) {
        PrintWriter err = new PrintWriter(System.err, true);
        err.println("leasekeeper: " + Visible.of(message.replace("\r\n", " ").replace('\n', ' '),
                Visible.standardError()));
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = Leasekeeper.class.getPackage().getImplementationVersion();
            return new String[] {"leasekeeper " + (version == null ? "(development build)" : version)};
        }
    }
}
