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
                Calls.Revoke.class, Calls.Watch.class})
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
        cli.setParameterExceptionHandler((e, ignored) -> {
            diagnose(e.getMessage() + " (see " + e.getCommandLine().getCommandSpec().qualifiedName() + " --help)");
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

    /** One line on standard error. */
    static void diagnose(String message) {
        PrintWriter err = new PrintWriter(System.err, true);
        err.println("leasekeeper: " + message.replace('\n', ' '));
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = Leasekeeper.class.getPackage().getImplementationVersion();
            return new String[] {"leasekeeper " + (version == null ? "(development build)" : version)};
        }
    }
}
