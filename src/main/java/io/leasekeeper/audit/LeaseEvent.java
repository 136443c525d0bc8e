package io.leasekeeper.audit;

import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/** A recorded transition, as the history endpoint shows it. */
public record LeaseEvent(
        long eventId,
        UUID leaseId,
        EventType type,
        String fromState,
        String toState,
        long fencingToken,
        Instant at,
        String principal,
        String requestId,
        String traceId,
        Map<String, Object> details) {
}
