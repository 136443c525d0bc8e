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

    /** What every one-call command shares: the service to call and printing the answer. */
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

    @Command(name = "acquire", description = "Acquire a key (waiting for it up to --wait); print the lease.")
    static final class Acquire extends Call {
        @Mixin
        AcquireOptions acquire;
        @Option(names = "--max-lifetime", paramLabel = "DURATION", converter = Durations.class,
                description = "the lease's longest life, whatever its renewals (default: the service's)")
        Duration maxLifetime;
        @Option(names = "--trace-id", paramLabel = "TEXT")
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
        @Option(names = "--fencing-token", required = true, paramLabel = "N")
        long fencingToken;
    }

    @Command(name = "renew", description = "Renew a lease held by the caller; print it.")
    static final class Renew extends WithToken {
        @Option(names = "--ttl", paramLabel = "DURATION", converter = Durations.class,
                description = "a new TTL (default: the lease's own)")
        Duration ttl;

        @Override
        Object answer(LeasekeeperClient client) {
            return client.renew(leaseId, fencingToken, ttl == null ? null : Durations.seconds(ttl));
        }
    }

    @Command(name = "release", description = "Release a lease if the token is still its own (compare-and-delete).")
    static final class Release extends WithToken {

        @Override
        Object answer(LeasekeeperClient client) {
            return client.release(leaseId, fencingToken);
        }
    }

    @Command(name = "inspect", description = "Print a lease of the caller's tenant.")
    static final class Inspect extends OnLease {
        @Override
        Object answer(LeasekeeperClient client) {
            return client.inspect(leaseId);
        }
    }

    @Command(name = "watch", description = "Wait until a lease is no longer active, or --wait passes; print it.")
    static final class Watch extends OnLease {
        @Option(names = "--wait", paramLabel = "DURATION", defaultValue = "30s", converter = Durations.class,
                description = "the longest wait, in whole seconds rounded up, up to the service's cap (default: 30s)")
        Duration wait;

        @Override
        Object answer(LeasekeeperClient client) {
            return client.watch(leaseId, Durations.seconds(wait));
        }
    }

    @Command(name = "revoke", description = "End a lease of the tenant, whoever holds it (scope leases:admin).")
    static final class Revoke extends OnLease {
        @Option(names = "--reason", required = true, paramLabel = "TEXT")
        String reason;

        @Override
        Object answer(LeasekeeperClient client) {
            return client.revoke(leaseId, reason);
        }
    }

    @Command(name = "history", description = "Print a page of a lease's events, oldest first, as {\"items\": [...], \"nextCursor\": ...}.")
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

    @Command(name = "current", description = "Print the active lease of a key.")
    static final class Current extends Call {
        @Mixin
        KeyOptions key;

        @Override
        Object answer(LeasekeeperClient client) {
            return client.current(key.key());
        }
    }

    @Command(name = "list", description = "Print a page of the tenant's leases as {\"items\": [...], \"nextCursor\": ...}.")
    static final class ListLeases extends Call {
        @Option(names = "--program", paramLabel = "NAME")
        String program;
        @Option(names = "--actor", paramLabel = "NAME")
        String actor;
        @Option(names = "--target", paramLabel = "TYPE:VALUE")
        String target;
        @Option(names = "--owner", paramLabel = "TEXT")
        String owner;
        @Option(names = "--holder", paramLabel = "TEXT")
        String holder;
        @Option(names = "--state", paramLabel = "STATE", description = "active (default), released, expired, revoked or any")
        String state;
        @Option(names = "--limit", paramLabel = "N")
        Integer limit;
        @Option(names = "--cursor", paramLabel = "TEXT")
        String cursor;

        @Override
        Object answer(LeasekeeperClient client) {
            Target t = target == null ? null : KeyOptions.target(spec, target);
            var page = client.list(new ListQuery(program, actor, t == null ? null : t.type(),
                    t == null ? null : t.value(), owner, holder, state, limit, cursor));
            Map<String, Object> answer = new LinkedHashMap<>();
            answer.put("items", page.items());
            answer.put("nextCursor", page.nextCursor());
            return answer;
        }
    }
}
