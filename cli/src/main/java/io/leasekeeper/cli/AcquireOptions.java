package io.leasekeeper.cli;

import io.leasekeeper.client.AcquireRequest;
import java.time.Duration;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** What {@code run} and {@code acquire} both ask for: the key, the holder, the TTL, the wait and the stored fields. */
final class AcquireOptions {

    @CommandLine.Spec(CommandLine.Spec.Target.MIXEE)
    CommandLine.Model.CommandSpec spec;

    @Mixin
    KeyOptions key;

    @Option(names = "--holder", paramLabel = "TEXT", description = "the holder (default: <hostname>/<pid>)")
    String holder;

    @Option(names = "--ttl", paramLabel = "DURATION", defaultValue = "30s", converter = Durations.class,
            description = "the lease's TTL, in whole seconds rounded up (default: 30s)")
    Duration ttl;

    @Option(names = "--wait", paramLabel = "DURATION", defaultValue = "0", converter = Durations.class,
            description = "how long to wait for a busy key (default: 0, answer at once)")
    Duration wait;

    @Option(names = "--lock-delay", paramLabel = "DURATION", defaultValue = "0", converter = Durations.class,
            description = "after a revoke or an expiry, the key stays closed this long (default: 0)")
    Duration lockDelay;

    @Option(names = "--job-id", paramLabel = "TEXT", description = "stored with the lease")
    String jobId;

    @Option(names = "--metadata", paramLabel = "JSON", description = "a JSON object stored with the lease")
    String metadata;

    AcquireRequest request() {
        return AcquireRequest.of(key.key(), holder != null ? holder : defaultHolder(), Durations.seconds(ttl))
                .withLockDelaySeconds(Durations.seconds(lockDelay)).withJobId(jobId)
                .withMetadata(Json.object(spec, metadata));
    }

    /** {@code <hostname>/<pid>}: the launcher execs the JVM, so the pid is the {@code leasekeeper} process's. */
    private static String defaultHolder() {
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
