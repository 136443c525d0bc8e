package io.leasekeeper.lease;

import io.leasekeeper.key.LeaseKey;

/** A validated, normalized acquire request; {@code waitSeconds} 0 is a 1.0 acquire, answered at once. */
record AcquireCommand(LeaseKey key, String holder, int ttlSeconds, int maxLifetimeSeconds, int lockDelaySeconds,
                      int waitSeconds, String jobId, String traceId, Metadata metadata) {
}
