package io.leasekeeper.client;

import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/** One recorded transition of a lease (its history, oldest first). */
public record LeaseEvent(long eventId, UUID leaseId, String type, String fromState, String toState,
                         long fencingToken, Instant at, String principal, String requestId, String traceId,
                         Map<String, Object> details) {
}
