package io.leasekeeper.client;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * A problem answered by the service, one subclass per problem code of the contract (an unknown code is this
 * class itself), so that callers catch what they handle: {@link LeaseHeld} and {@link LockDelayed} (both
 * {@link Busy}) for a busy key; {@link LeaseGone} (404, 409, 410 on a lease the caller held: it is no longer
 * theirs) for a lost lease.
 */
public class ProblemException extends RuntimeException {

    private final transient Problem problem;

    protected ProblemException(Problem problem) {
        super(problem.status() + " " + problem.code() + ": " + (problem.detail() != null ? problem.detail() : problem.title()));
        this.problem = problem;
    }

    public Problem problem() {
        return problem;
    }

    public int status() {
        return problem.status();
    }

    /** The stable UPPER_SNAKE code (null when the answer was not a problem document). */
    public String code() {
        return problem.code();
    }

    /** The Retry-After header, when the service sent one. */
    public Optional<Duration> retryAfter() {
        return Optional.ofNullable(problem.retryAfter());
    }

    /** The key is busy: another lease holds it ({@link LeaseHeld}) or its lock-delay runs ({@link LockDelayed}). */
    public abstract static class Busy extends ProblemException {
        Busy(Problem problem) {
            super(problem);
        }
    }

    /** 409 LEASE_HELD: who holds the key and until when (never its lease id or token). */
    public static final class LeaseHeld extends Busy {
        LeaseHeld(Problem problem) {
            super(problem);
        }

        public Holder holder() {
            return problem().holder();
        }
    }

    /** 409 LOCK_DELAYED: the key's last lease ended involuntarily; it is free again at {@link #availableAt()}. */
    public static final class LockDelayed extends Busy {
        LockDelayed(Problem problem) {
            super(problem);
        }

        public Instant availableAt() {
            return problem().availableAt();
        }
    }

    /**
     * The lease named is not (or no longer) the caller's to renew or release: not found, another owner's, another
     * token, expired, released or revoked. A holder that sees one has lost its lease.
     */
    public abstract static class LeaseGone extends ProblemException {
        LeaseGone(Problem problem) {
            super(problem);
        }
    }

    /** 404 LEASE_NOT_FOUND. */
    public static final class LeaseNotFound extends LeaseGone {
        LeaseNotFound(Problem problem) {
            super(problem);
        }
    }

    /** 403 NOT_LEASE_OWNER. */
    public static final class NotLeaseOwner extends LeaseGone {
        NotLeaseOwner(Problem problem) {
            super(problem);
        }
    }

    /** 409 FENCING_TOKEN_MISMATCH. */
    public static final class FencingTokenMismatch extends LeaseGone {
        FencingTokenMismatch(Problem problem) {
            super(problem);
        }
    }

    /** 410 LEASE_EXPIRED. */
    public static final class LeaseExpired extends LeaseGone {
        LeaseExpired(Problem problem) {
            super(problem);
        }
    }

    /** 410 LEASE_RELEASED. */
    public static final class LeaseReleased extends LeaseGone {
        LeaseReleased(Problem problem) {
            super(problem);
        }
    }

    /** 410 LEASE_REVOKED. */
    public static final class LeaseRevoked extends LeaseGone {
        LeaseRevoked(Problem problem) {
            super(problem);
        }
    }

    /** 409 LEASE_NOT_ACTIVE: an admin's revoke of a lease that already ended. */
    public static final class LeaseNotActive extends ProblemException {
        LeaseNotActive(Problem problem) {
            super(problem);
        }
    }

    /** 404 NO_ACTIVE_LEASE: no lease holds the key now. */
    public static final class NoActiveLease extends ProblemException {
        NoActiveLease(Problem problem) {
            super(problem);
        }
    }

    /** 400 VALIDATION_FAILED, with the fields at fault. */
    public static final class ValidationFailed extends ProblemException {
        ValidationFailed(Problem problem) {
            super(problem);
        }

        public List<Problem.FieldError> errors() {
            return problem().errors();
        }
    }

    /** 400 REQUEST_REJECTED: a request the service's firewall refused (a malformed path or header). */
    public static final class RequestRejected extends ProblemException {
        RequestRejected(Problem problem) {
            super(problem);
        }
    }

    /** 413 REQUEST_TOO_LARGE. */
    public static final class RequestTooLarge extends ProblemException {
        RequestTooLarge(Problem problem) {
            super(problem);
        }
    }

    /** 422 IDEMPOTENCY_KEY_REUSED: the Idempotency-Key was used before for a different request. */
    public static final class IdempotencyKeyReused extends ProblemException {
        IdempotencyKeyReused(Problem problem) {
            super(problem);
        }
    }

    /** 429 QUOTA_EXCEEDED (revision 1.1): the tenant holds as many active leases as it may; nothing changed. */
    public static final class QuotaExceeded extends ProblemException {
        QuotaExceeded(Problem problem) {
            super(problem);
        }
    }

    /** 429 RATE_LIMITED (revision 1.1): too many requests of the tenant; retry after {@link #retryAfter()}. */
    public static final class RateLimited extends ProblemException {
        RateLimited(Problem problem) {
            super(problem);
        }
    }

    /**
     * 429 TENANT_BUSY (revision 1.2): the instance is busy with the tenant's other requests; retried by the client,
     * thrown after its retries.
     */
    public static final class TenantBusy extends ProblemException {
        TenantBusy(Problem problem) {
            super(problem);
        }
    }

    /** 401 UNAUTHENTICATED: no token, or one the service does not accept. */
    public static final class Unauthenticated extends ProblemException {
        Unauthenticated(Problem problem) {
            super(problem);
        }
    }

    /** 403 INSUFFICIENT_SCOPE. */
    public static final class InsufficientScope extends ProblemException {
        InsufficientScope(Problem problem) {
            super(problem);
        }
    }

    /** 404 NOT_FOUND: no such path. */
    public static final class NotFound extends ProblemException {
        NotFound(Problem problem) {
            super(problem);
        }
    }

    /** 405 METHOD_NOT_ALLOWED. */
    public static final class MethodNotAllowed extends ProblemException {
        MethodNotAllowed(Problem problem) {
            super(problem);
        }
    }

    /** 406 NOT_ACCEPTABLE. */
    public static final class NotAcceptable extends ProblemException {
        NotAcceptable(Problem problem) {
            super(problem);
        }
    }

    /** 415 UNSUPPORTED_MEDIA_TYPE. */
    public static final class UnsupportedMediaType extends ProblemException {
        UnsupportedMediaType(Problem problem) {
            super(problem);
        }
    }

    /** 503 DATABASE_UNAVAILABLE, after the client's retries. */
    public static final class DatabaseUnavailable extends ProblemException {
        DatabaseUnavailable(Problem problem) {
            super(problem);
        }
    }

    /** 503 TOKEN_KEYS_UNAVAILABLE, after the client's retries: the service could never fetch its token issuer's keys. */
    public static final class TokenKeysUnavailable extends ProblemException {
        TokenKeysUnavailable(Problem problem) {
            super(problem);
        }
    }

    /** 500 INTERNAL_ERROR. */
    public static final class InternalError extends ProblemException {
        InternalError(Problem problem) {
            super(problem);
        }
    }

    private static final Map<String, Function<Problem, ProblemException>> BY_CODE = Map.ofEntries(
            Map.entry("VALIDATION_FAILED", ValidationFailed::new),
            Map.entry("UNAUTHENTICATED", Unauthenticated::new),
            Map.entry("INSUFFICIENT_SCOPE", InsufficientScope::new),
            Map.entry("NOT_LEASE_OWNER", NotLeaseOwner::new),
            Map.entry("LEASE_NOT_FOUND", LeaseNotFound::new),
            Map.entry("NO_ACTIVE_LEASE", NoActiveLease::new),
            Map.entry("NOT_FOUND", NotFound::new),
            Map.entry("METHOD_NOT_ALLOWED", MethodNotAllowed::new),
            Map.entry("NOT_ACCEPTABLE", NotAcceptable::new),
            Map.entry("UNSUPPORTED_MEDIA_TYPE", UnsupportedMediaType::new),
            Map.entry("REQUEST_TOO_LARGE", RequestTooLarge::new),
            Map.entry("REQUEST_REJECTED", RequestRejected::new),
            Map.entry("LEASE_HELD", LeaseHeld::new),
            Map.entry("LOCK_DELAYED", LockDelayed::new),
            Map.entry("FENCING_TOKEN_MISMATCH", FencingTokenMismatch::new),
            Map.entry("LEASE_NOT_ACTIVE", LeaseNotActive::new),
            Map.entry("IDEMPOTENCY_KEY_REUSED", IdempotencyKeyReused::new),
            Map.entry("QUOTA_EXCEEDED", QuotaExceeded::new),
            Map.entry("RATE_LIMITED", RateLimited::new),
            Map.entry("TENANT_BUSY", TenantBusy::new),
            Map.entry("LEASE_EXPIRED", LeaseExpired::new),
            Map.entry("LEASE_RELEASED", LeaseReleased::new),
            Map.entry("LEASE_REVOKED", LeaseRevoked::new),
            Map.entry("INTERNAL_ERROR", InternalError::new),
            Map.entry("DATABASE_UNAVAILABLE", DatabaseUnavailable::new),
            Map.entry("TOKEN_KEYS_UNAVAILABLE", TokenKeysUnavailable::new));

    /** The exception of a problem's code; the base class for a code this version does not know. */
    static ProblemException of(Problem problem) {
        return BY_CODE.getOrDefault(problem.code() == null ? "" : problem.code(), ProblemException::new).apply(problem);
    }

    /** The codes this version maps to their own exception type. */
    static java.util.Set<String> knownCodes() {
        return BY_CODE.keySet();
    }
}
