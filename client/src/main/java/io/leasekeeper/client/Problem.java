package io.leasekeeper.client;

import java.time.Duration;
import java.util.List;

/**
 * A problem the service answered (RFC 9457, contract "Errors"): its HTTP status, stable {@code code}, title,
 * detail and trace id, the {@code Retry-After} header when sent, and what some codes add ({@code holder} of
 * LEASE_HELD, {@code availableAt} of LOCK_DELAYED, {@code errors} of VALIDATION_FAILED). {@code body} is the
 * answer as received.
 */
public record Problem(int status, String code, String title, String detail, String traceId, Duration retryAfter,
                      Holder holder, java.time.Instant availableAt, List<FieldError> errors, String body) {

    /** One field a VALIDATION_FAILED names, with why. */
    public record FieldError(String field, String message) {
    }
}
