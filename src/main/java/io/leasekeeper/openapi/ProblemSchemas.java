package io.leasekeeper.openapi;

import io.leasekeeper.web.ErrorCode;
import io.leasekeeper.web.FieldErrors.FieldError;
import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.List;

/**
 * The problem body as the OpenAPI document describes it. Read into schemas only: the bodies themselves
 * are built by {@link io.leasekeeper.web.Problems} (and, for LEASE_HELD and LOCK_DELAYED, by the acquire
 * handler).
 */
final class ProblemSchemas {

    private ProblemSchemas() {
    }

    @Schema(name = "Problem", description = "RFC 9457 problem details with the contract's code and trace id.",
            requiredProperties = {"type", "title", "status", "code", "traceId"})
    record Problem(
            @Schema(format = "uri-reference", description = "Names the code: /problems/ and the code in lowercase"
                    + " with dashes (/problems/lease-held).") String type,
            @Schema(description = "The code's fixed title.") String title,
            @Schema(description = "The HTTP status.") int status,
            @Schema(description = "What went wrong with this request, for people.") String detail,
            @Schema(format = "uri-reference", description = "The request path.") String instance,
            @Schema(description = "The stable code: what a client decides on.") ErrorCode code,
            @Schema(description = "The request's trace id, as in X-Trace-Id.", pattern = "^[0-9a-f]{32}$") String traceId,
            @Schema(description = "With VALIDATION_FAILED: every field at fault.") List<FieldError> errors,
            @Schema(description = "With LEASE_HELD: who holds the key (never the lease id or its fencing token).")
            Holder holder,
            @Schema(description = "With LOCK_DELAYED: when the key's lock-delay ends and it can be acquired.")
            Instant availableAt) {
    }

    @Schema(name = "LeaseHolder", requiredProperties = {"owner", "holder", "expiresAt", "remainingMs"})
    record Holder(
            @Schema(description = "The holding lease's owner (its acquirer's JWT subject).") String owner,
            @Schema(description = "The holding lease's holder (service instance).") String holder,
            @Schema(description = "When the holding lease expires unless renewed.") Instant expiresAt,
            @Schema(description = "Milliseconds until then.") long remainingMs) {
    }
}
