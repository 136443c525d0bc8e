package io.leasekeeper.audit;

import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/**
 * One transition to record. {@code principal} is the caller's subject, or {@code system:...} for
 * transitions the service makes itself; {@code at} is the database time of the transition.
 */
public record NewEvent(
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
