package io.leasekeeper.lease;

import io.leasekeeper.target.LeaseKey;
import java.util.Map;

/** A validated, normalized acquire request. */
record AcquireCommand(LeaseKey key, String holder, int ttlSeconds, int maxLifetimeSeconds, String jobId,
                      String traceId, Map<String, Object> metadata) {
}
