package io.leasekeeper.cli;

import io.leasekeeper.client.AcquireRequest;
import io.leasekeeper.client.Lease;
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
        KeyOptions key;
        @Option(names = "--holder", paramLabel = "TEXT", description = "the holder (default: <hostname>/<pid>)")
        String holder;
        @Option(names = "--ttl", paramLabel = "DURATION", defaultValue = "30s", converter = Durations.class,
                description = "the lease's TTL, in whole seconds rounded up (default: 30s)")
        Duration ttl;
        @Option(names = "--max-lifetime", paramLabel = "DURATION", converter = Durations.class,
                description = "the lease's longest life, whatever its renewals (default: the service's)")
        Duration maxLifetime;
        @Option(names = "--wait", paramLabel = "DURATION", defaultValue = "0", converter = Durations.class,
                description = "how long to wait for a busy key (default: 0, answer at once)")
        Duration wait;
        @Option(names = "--lock-delay", paramLabel = "DURATION", defaultValue = "0", converter = Durations.class,
                description = "the key stays closed this long after a revoke or an expiry (default: 0)")
        Duration lockDelay;
        @Option(names = "--job-id", paramLabel = "TEXT")
        String jobId;
        @Option(names = "--trace-id", paramLabel = "TEXT")
        String traceId;
        @Option(names = "--metadata", paramLabel = "JSON", description = "a JSON object stored with the lease")
        String metadata;

        @Override
        Object answer(LeasekeeperClient client) {
            AcquireRequest request = request(spec, key, holder, ttl, lockDelay, jobId, metadata).withTraceId(traceId);
            if (maxLifetime != null) {
                request = request.withMaxLifetimeSeconds(Durations.seconds(maxLifetime));
            }
            return client.acquire(request, wait);
        }
    }

    @Command(name = "renew", description = "Renew a lease held by the caller; print it.")
    static final class Renew extends OnLease {
        @Option(names = "--fencing-token", required = true, paramLabel = "N")
        long fencingToken;
        @Option(names = "--ttl", paramLabel = "DURATION", converter = Durations.class,
                description = "a new TTL (default: the lease's own)")
        Duration ttl;

        @Override
        Object answer(LeasekeeperClient client) {
            return client.renew(leaseId, fencingToken, ttl == null ? null : Durations.seconds(ttl));
        }
    }

    @Command(name = "release", description = "Release a lease if the token is still its own (compare-and-delete).")
    static final class Release extends OnLease {
        @Option(names = "--fencing-token", required = true, paramLabel = "N")
        long fencingToken;

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

    @Command(name = "history", description = "Print a lease's events, oldest first, as {\"items\": [...]}.")
    static final class History extends OnLease {
        @Override
        Object answer(LeasekeeperClient client) {
            return Map.of("items", client.history(leaseId));
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

    /** The acquire that {@code acquire} and {@code run} send. */
    static AcquireRequest request(CommandLine.Model.CommandSpec spec, KeyOptions key, String holder, Duration ttl,
                                  Duration lockDelay, String jobId, String metadata) {
        return AcquireRequest.of(key.key(), holder != null ? holder : defaultHolder(), Durations.seconds(ttl))
                .withLockDelaySeconds(Durations.seconds(lockDelay)).withJobId(jobId)
                .withMetadata(Json.object(spec, metadata));
    }

    /** {@code <hostname>/<pid>}: the launcher execs the JVM, so the pid is the {@code leasekeeper} process's. */
    static String defaultHolder() {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            try {
                host = java.net.InetAddress.getLocalHost().getHostName();
            } catch (java.net.UnknownHostException e) {
                host = "localhost";
            }
        }
        return host + "/" + ProcessHandle.current().pid();
    }
}
