package io.leasekeeper.cli;

import io.leasekeeper.client.HeldLease;
import io.leasekeeper.client.HoldOptions;
import io.leasekeeper.client.LeasekeeperClient;
import io.leasekeeper.client.ProblemException;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import sun.misc.Signal;

/**
 * {@code leasekeeper run [options] -- COMMAND [ARG…]}: runs COMMAND while holding a lease (cli.md).
 *
 * <ol>
 *   <li>Acquire, waiting up to {@code --wait} (the library's waiting acquire, repeated past the service's cap,
 *       its 503s, 429 TENANT_BUSYs and failed connections retried inside the wait); a key still busy exits with
 *       {@code -E}.</li>
 *   <li>COMMAND starts with the lease's id, token and key in its environment, its standard streams inherited.</li>
 *   <li>The library's {@link HeldLease} renews every third of the TTL, watches the lease, and keeps the local
 *       deadline on the monotonic clock; its loss stops COMMAND and its descendants (SIGTERM, SIGKILL after
 *       {@code --kill-after}) and exits 76.</li>
 *   <li>COMMAND's own end releases the lease and exits with COMMAND's status; SIGINT and SIGTERM sent to
 *       {@code leasekeeper} are passed on to COMMAND, which ends the same way.</li>
 * </ol>
 */
@Command(name = "run", description = "Run COMMAND while holding a lease on the key; stop it when the lease is lost.",
        mixinStandardHelpOptions = true, versionProvider = Leasekeeper.Version.class,
        exitCodeListHeading = HelpText.EXIT_STATUSES, exitCodeList = {HelpText.COMMAND_STATUS, HelpText.BUSY_RUN,
                HelpText.LOST, HelpText.USAGE, HelpText.DATA, HelpText.UNAVAILABLE, HelpText.NO_PERMISSION,
                HelpText.SOFTWARE},
        footerHeading = HelpText.EXAMPLE,
        footer = {"  leasekeeper run --target opaque:billing/nightly --actor invoicer \\",
                "      --ttl 2m --wait 5m -- ./invoice.sh"})
final class RunCommand implements Callable<Integer> {

    @Mixin
    ServiceOptions service;

    @Mixin
    AcquireOptions acquire;

    @Option(names = {"-E", "--conflict-exit-code"}, paramLabel = "N", defaultValue = "" + Exit.BUSY,
            description = "the exit status when the key stays busy (default: 75)")
    int conflictExitCode;

    @Option(names = "--kill-after", paramLabel = "DURATION", defaultValue = "5s", converter = Durations.class,
            description = "SIGKILL follows SIGTERM this much later when the lease is lost (default: 5s)")
    Duration killAfter;

    @Parameters(arity = "1..*", paramLabel = "COMMAND", description = "the command and its arguments, after --")
    List<String> command;

    /** Set once, by whichever comes first: the lease's loss (the command is then stopped) or the command's own end. */
    private final Object outcome = new Object();
    private boolean stopping;
    private boolean ended;

    @Override
    public Integer call() throws InterruptedException {
        LeasekeeperClient client = service.client();
        HeldLease held;
        try {
            held = client.hold(acquire.request(), acquire.wait, HoldOptions.defaults());
        } catch (ProblemException.Busy busy) {
            Leasekeeper.diagnose("the key is busy: " + Exit.describe(busy));
            return conflictExitCode;
        }
        Process process;
        try {
            ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
            Map<String, String> environment = builder.environment();
            // The command gets its lease, not the command line's credentials: with the token it could act as the
            // command line's subject (release the lease it runs under, take any key of the tenant) or log it.
            environment.remove("LEASEKEEPER_TOKEN");
            environment.put("LEASEKEEPER_LEASE_ID", held.leaseId().toString());
            environment.put("LEASEKEEPER_FENCING_TOKEN", Long.toString(held.fencingToken()));
            environment.put("LEASEKEEPER_KEY", held.key());
            process = builder.start();
        } catch (IOException e) {
            held.close();
            Leasekeeper.diagnose("cannot run " + command.get(0) + ": " + e.getMessage());
            return Exit.SOFTWARE;
        }
        ProcessTree tree = new ProcessTree(process);
        passOn("TERM", tree::terminate);
        passOn("INT", tree::interrupt);

        Thread stopper = new Thread(() -> {
            HeldLease.Loss loss = held.lost().toCompletableFuture().join();
            synchronized (outcome) {
                if (ended) {
                    return; // the command ended by itself first: its own status stands
                }
                stopping = true;
            }
            Leasekeeper.diagnose("lost the lease on " + held.key() + " (" + why(loss) + "): stopping the command"
                    + " (SIGTERM, then SIGKILL after " + killAfter.toMillis() + " ms)");
            tree.stop(killAfter);
        }, "leasekeeper-stopper");
        stopper.setDaemon(true);
        stopper.start();

        int status = process.waitFor();
        synchronized (outcome) {
            ended = !stopping;
        }
        if (!ended) {
            stopper.join();
            return Exit.LOST;
        }
        held.close(); // releases by compare-and-delete, unless the lease was lost meanwhile
        return status; // the JDK answers 128 + the signal's number for a command a signal ended
    }

    /**
     * Handles a signal sent to {@code leasekeeper} by passing it on to COMMAND instead of ending the JVM. A signal
     * this process was started ignoring (SIGINT of a job started in the background) stays ignored.
     */
    private static void passOn(String signal, Runnable toCommand) {
        try {
            Signal.handle(new Signal(signal), received -> toCommand.run());
        } catch (IllegalArgumentException reserved) {
            Leasekeeper.diagnose("SIG" + signal + " will not be passed on to the command: " + reserved.getMessage());
        }
    }

    private static String why(HeldLease.Loss loss) {
        switch (loss) {
            case REVOKED:
                return "revoked";
            case EXPIRED:
                return "expired";
            case RELEASED:
                return "released by its owner elsewhere";
            case LOCAL_DEADLINE:
                return "no successful renew before the local deadline";
            case TOKEN_MISMATCH:
                return "fencing token mismatch";
            case NOT_OWNER:
                return "not this owner's";
            default:
                return "not found";
        }
    }
}
