package io.leasekeeper.cli;

import io.leasekeeper.client.AcquireRequest;
import io.leasekeeper.client.LeasekeeperClient;
import io.leasekeeper.client.ListQuery;
import io.leasekeeper.client.Target;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The one-call commands: one API call each, its JSON answer on standard output, exit 0; a failure exits as
 * {@link Leasekeeper#failed} says.
 */
final class Calls {

    private Calls() {
    }

    /**
     * What every one-call command shares: the service to call, printing the answer, and the help's options and
     * exit statuses (a command that can find its key busy adds 75).
     */
    @Command(mixinStandardHelpOptions = true, versionProvider = Leasekeeper.Version.class,
            exitCodeListHeading = HelpText.EXIT_STATUSES, exitCodeList = {HelpText.SUCCESS, HelpText.USAGE,
                    HelpText.DATA, HelpText.UNAVAILABLE, HelpText.NO_PERMISSION, HelpText.SOFTWARE},
            footerHeading = HelpText.EXAMPLE)
    abstract static class Call implements Callable<Integer> {

        @Mixin
        ServiceOptions service;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            Json.print(answer(service.client()));
            return 0;
        }

        abstract Object answer(LeasekeeperClient client);
    }

    /** A command on one lease, named by {@code --lease-id}. */
    abstract static class OnLease extends Call {
        @Option(names = "--lease-id", required = true, paramLabel = "UUID", description = "the lease")
        UUID leaseId;
    }

    @Command(name = "acquire", description = "Acquire a key (waiting for it up to --wait); print the lease.",
            exitCodeList = {HelpText.SUCCESS, HelpText.BUSY, HelpText.USAGE, HelpText.DATA, HelpText.UNAVAILABLE,
                    HelpText.NO_PERMISSION, HelpText.SOFTWARE},
            footer = "  leasekeeper acquire --target opaque:repo/main --actor indexer --wait 1m")
    static final class Acquire extends Call {
        @Mixin
        AcquireOptions acquire;
        @Option(names = "--max-lifetime", paramLabel = "DURATION", converter = Durations.class,
                description = "the lease's longest life, whatever its renewals (default: the service's)")
        Duration maxLifetime;
        @Option(names = "--trace-id", paramLabel = "TEXT", description = "stored with the lease (default: none)")
        String traceId;

        @Override
        Object answer(LeasekeeperClient client) {
            AcquireRequest request = acquire.request().withTraceId(traceId);
            if (maxLifetime != null) {
                request = request.withMaxLifetimeSeconds(Durations.seconds(maxLifetime));
            }
            return client.acquire(request, acquire.wait);
        }
    }

    /** A command on one lease that names the token it holds. */
    abstract static class WithToken extends OnLease {
        @Option(names = "--fencing-token", required = true, paramLabel = "N",
                description = "the lease's fencing token, as acquire printed it")
        long fencingToken;
    }

    @Command(name = "renew", description = "Renew a lease held by the caller; print it.",
            footer = "  leasekeeper renew --lease-id \"$LEASE_ID\" --fencing-token \"$TOKEN\"")
    static final class Renew extends WithToken {
        @Option(names = "--ttl", paramLabel = "DURATION", converter = Durations.class,
                description = "a new TTL (default: the lease's own)")
        Duration ttl;

        @Override
        Object answer(LeasekeeperClient client) {
            return client.renew(leaseId, fencingToken, ttl == null ? null : Durations.seconds(ttl));
        }
    }

    @Command(name = "release", description = "Release a lease if the token is still its own (compare-and-delete).",
            footer = "  leasekeeper release --lease-id \"$LEASE_ID\" --fencing-token \"$TOKEN\"")
    static final class Release extends WithToken {

        @Override
        Object answer(LeasekeeperClient client) {
            return client.release(leaseId, fencingToken);
        }
    }

    @Command(name = "inspect", description = "Print a lease of the caller's tenant.",
            footer = "  leasekeeper inspect --lease-id \"$LEASE_ID\" | jq .state")
    static final class Inspect extends OnLease {
        @Override
        Object answer(LeasekeeperClient client) {
            return client.inspect(leaseId);
        }
    }

    @Command(name = "watch", description = "Wait until a lease is no longer active, or --wait passes; print it.",
            footer = "  leasekeeper watch --lease-id \"$LEASE_ID\" --wait 30s")
    static final class Watch extends OnLease {
        @Option(names = "--wait", paramLabel = "DURATION", defaultValue = "30s", converter = Durations.class,
                description = "the longest wait, in whole seconds rounded up, up to the service's cap (default: 30s)")
        Duration wait;

        @Override
        Object answer(LeasekeeperClient client) {
            return client.watch(leaseId, Durations.seconds(wait));
        }
    }

    @Command(name = "revoke", description = "End a lease of the tenant, whoever holds it (scope leases:admin).",
            footer = "  leasekeeper revoke --lease-id \"$LEASE_ID\" --reason stuck")
    static final class Revoke extends OnLease {
        @Option(names = "--reason", required = true, paramLabel = "TEXT",
                description = "why, 1 to 512 characters, kept in the lease's history")
        String reason;

        @Override
        Object answer(LeasekeeperClient client) {
            return client.revoke(leaseId, reason);
        }
    }

    @Command(name = "history", description = "Print a page of a lease's events, oldest first, as {\"items\": [...], \"nextCursor\": ...}.",
            footer = "  leasekeeper history --lease-id \"$LEASE_ID\" --limit 50")
    static final class History extends OnLease {
        @Option(names = "--limit", paramLabel = "N", description = "events per page (default: the service's, 100)")
        Integer limit;
        @Option(names = "--cursor", paramLabel = "TEXT", description = "the nextCursor of the previous page")
        String cursor;

        @Override
        Object answer(LeasekeeperClient client) {
            return client.historyPage(leaseId, limit, cursor);
        }
    }

    @Command(name = "current", description = "Print the active lease of a key.",
            footer = "  leasekeeper current --target opaque:repo/main --actor indexer --operation sync")
    static final class Current extends Call {
        @Mixin
        KeyOptions key;

        @Override
        Object answer(LeasekeeperClient client) {
            return client.current(key.key());
        }
    }

    /** The key's options, {@code --operation} too, are filters here: each one given narrows the list; none is required. */
    @Command(name = "list",
            description = "Print a page of the tenant's leases, largest fencing token first, as {\"items\": [...], \"nextCursor\": ...}.",
            footer = "  leasekeeper list --actor indexer --operation reindex --state any --limit 20")
    static final class ListLeases extends Call {
        @Option(names = "--program", paramLabel = "NAME", description = "only this program's (default: any)")
        String program;
        @Option(names = "--actor", paramLabel = "NAME", description = "only this actor's (default: any)")
        String actor;
        @Option(names = "--target", paramLabel = "TYPE:VALUE",
                description = "only this target's, e.g. opaque:repo/main (only the first ':' splits; default: any)")
        String target;
        @Option(names = "--operation", paramLabel = "NAME",
                description = "only this operation class's (default: any, or none)")
        String operation;
        @Option(names = "--owner", paramLabel = "TEXT",
                description = "only leases acquired by this subject (default: any)")
        String owner;
        @Option(names = "--holder", paramLabel = "TEXT", description = "only this holder's (default: any)")
        String holder;
        @Option(names = "--state", paramLabel = "STATE",
                description = "active (default), released, expired, revoked or any")
        String state;
        @Option(names = "--limit", paramLabel = "N",
                description = "leases per page, 1 to 1000 (default: the service's, 100)")
        Integer limit;
        @Option(names = "--cursor", paramLabel = "TEXT", description = "the nextCursor of the previous page")
        String cursor;

        @Override
        Object answer(LeasekeeperClient client) {
            Target t = target == null ? null : KeyOptions.target(spec, target);
            var page = client.list(new ListQuery(program, actor, t == null ? null : t.type(),
                    t == null ? null : t.value(), owner, holder, state, limit, cursor).withOperation(operation));
            Map<String, Object> answer = new LinkedHashMap<>();
            answer.put("items", page.items());
            answer.put("nextCursor", page.nextCursor());
            return answer;
        }
    }
}
