package io.leasekeeper.cli;

import io.leasekeeper.client.Holder;
import io.leasekeeper.client.ProblemException;

/** The exit statuses of the contract (cli.md, "Exit statuses"), after sysexits(3) where one fits. */
final class Exit {

    /** The key stayed busy (LEASE_HELD, LOCK_DELAYED) until the wait ended; {@code run -E} changes it. */
    static final int BUSY = 75;
    /** {@code run}: the lease was lost while the command ran, and the command was stopped. */
    static final int LOST = 76;
    static final int USAGE = 64;
    /** The service refused the input (400). */
    static final int DATA = 65;
    /** The service unreachable, or 503 after the retries. */
    static final int UNAVAILABLE = 69;
    /** 401 or 403. */
    static final int NO_PERMISSION = 77;
    /** Anything else. */
    static final int SOFTWARE = 70;

    private Exit() {
    }

    /**
     * The status of a problem other than a busy key. cli.md lists no 429, so QUOTA_EXCEEDED, RATE_LIMITED and a
     * TENANT_BUSY that outlasted the library's retries are all 70, "anything else": not 75, which tells a caller
     * that someone else holds the key, nor 69, which is the service unreachable or its database.
     */
    static int of(int httpStatus) {
        switch (httpStatus) {
            case 400:
                return DATA;
            case 401:
            case 403:
                return NO_PERMISSION;
            case 503:
                return UNAVAILABLE;
            default:
                return SOFTWARE;
        }
    }

    /** A problem in one line: status, code, title, detail, and who holds a busy key until when. */
    static String describe(ProblemException e) {
        var p = e.problem();
        StringBuilder line = new StringBuilder().append(p.status());
        if (p.code() != null) {
            line.append(' ').append(p.code());
        }
        if (p.title() != null) {
            line.append(": ").append(p.title());
        }
        if (p.detail() != null && !p.detail().isBlank()) {
            line.append(": ").append(p.detail());
        }
        Holder holder = p.holder();
        if (holder != null) {
            line.append(" (held by owner ").append(holder.owner()).append(", holder ").append(holder.holder())
                    .append(", until ").append(holder.expiresAt()).append(')');
        }
        if (p.availableAt() != null) {
            line.append(" (lock-delayed until ").append(p.availableAt()).append(')');
        }
        p.errors().forEach(error -> line.append("; ").append(error.field()).append(": ").append(error.message()));
        return line.toString();
    }
}
