package io.leasekeeper.cli;

import java.util.List;

/**
 * What every command's help shows beside its options: the exit statuses of the contract (cli.md, "Exit
 * statuses"), one line each, and an example. Each command lists the statuses it can end with.
 */
final class HelpText {

    static final String EXIT_STATUSES = "%nExit statuses:%n";
    static final String EXAMPLE = "%nExample:%n";

    static final String SUCCESS = "0:the call succeeded; its JSON answer is on standard output";
    static final String COMMAND_STATUS = "own:run: COMMAND's own status, once it ended by itself"
            + " (128 + the signal's number when a signal ended it)";
    static final String BUSY = "75:the key was busy (LEASE_HELD, LOCK_DELAYED) until --wait ended";
    static final String BUSY_RUN = "75:the key was busy (LEASE_HELD, LOCK_DELAYED) until --wait ended"
            + " (-E changes it)";
    static final String LOST = "76:run: the lease was lost while COMMAND ran, and COMMAND was stopped";
    static final String USAGE = "64:wrong usage (unknown option, missing --target, bad duration, refused --url)";
    static final String DATA = "65:the service refused the input (400)";
    static final String UNAVAILABLE = "69:the service unreachable, or 503 after the retries";
    static final String NO_PERMISSION = "77:401 or 403: no token, a refused token or a missing scope";
    static final String SOFTWARE = "70:anything else (404, 409, 410, a 429 after the retries)";

    private HelpText() {
    }

    /**
     * Whether {@code arguments} ask for help: {@code -h} or {@code --help} among the options, before a {@code --}
     * (after it they are COMMAND's). Help is answered even when the other options are wrong.
     */
    static boolean asked(String... arguments) {
        for (String argument : arguments) {
            if (argument.equals("--")) {
                return false;
            }
            if (HELP.contains(argument)) {
                return true;
            }
        }
        return false;
    }

    private static final List<String> HELP = List.of("-h", "--help");
}
