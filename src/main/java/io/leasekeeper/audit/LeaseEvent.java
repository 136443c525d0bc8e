package io.leasekeeper.audit;

import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/** A recorded transition, as the history endpoint shows it. */
@Schema(description = "One transition of a lease, written in the transaction that made it.")
public record LeaseEvent(
        long eventId,
        UUID leaseId,
        EventType type,
        @Schema(nullable = true, description = "Null for ACQUIRED.") String fromState,
        String toState,
        long fencingToken,
        Instant at,
        @Schema(description = "The caller's subject, an admin's for REVOKED, system:... for the service's own"
                + " transitions.") String principal,
        @Schema(nullable = true, description = "The request's Idempotency-Key, else its X-Request-Id.")
        String requestId,
        @Schema(nullable = true) String traceId,
        @Schema(description = "What the transition changed (for example expiresAt and ttlSeconds).")
        Map<String, Object> details) {
}
