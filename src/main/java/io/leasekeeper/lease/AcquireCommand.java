package io.leasekeeper.lease;

import io.leasekeeper.target.LeaseKey;

/** A validated, normalized acquire request. */
record AcquireCommand(LeaseKey key, String holder, int ttlSeconds, int maxLifetimeSeconds, String jobId,
                      String traceId, Metadata metadata) {
}
