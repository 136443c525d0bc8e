package io.leasekeeper.web;

import java.util.Locale;
import org.springframework.http.HttpStatus;

/** The stable codes of the contract's problem responses, each with its one HTTP status. */
public enum ErrorCode {
    VALIDATION_FAILED(HttpStatus.BAD_REQUEST, "Request validation failed"),
    UNAUTHENTICATED(HttpStatus.UNAUTHORIZED, "Authentication required"),
    INSUFFICIENT_SCOPE(HttpStatus.FORBIDDEN, "Insufficient scope"),
    NOT_LEASE_OWNER(HttpStatus.FORBIDDEN, "Not the lease owner"),
    LEASE_NOT_FOUND(HttpStatus.NOT_FOUND, "Lease not found"),
    NO_ACTIVE_LEASE(HttpStatus.NOT_FOUND, "No active lease"),
    NOT_FOUND(HttpStatus.NOT_FOUND, "Not found"),
    METHOD_NOT_ALLOWED(HttpStatus.METHOD_NOT_ALLOWED, "Method not allowed"),
    NOT_ACCEPTABLE(HttpStatus.NOT_ACCEPTABLE, "Not acceptable"),
    UNSUPPORTED_MEDIA_TYPE(HttpStatus.UNSUPPORTED_MEDIA_TYPE, "Unsupported media type"),
    REQUEST_TOO_LARGE(HttpStatus.CONTENT_TOO_LARGE, "Request body too large"),
    /** Any other 4xx that Spring MVC or the servlet container answers (413, 414, ...): the status says why. */
    REQUEST_REJECTED(HttpStatus.BAD_REQUEST, "Request rejected"),
    LEASE_HELD(HttpStatus.CONFLICT, "Lease held"),
    /** The key's last lease ended involuntarily and its lock-delay has not passed: retry at availableAt. */
    LOCK_DELAYED(HttpStatus.CONFLICT, "Lock delayed"),
    FENCING_TOKEN_MISMATCH(HttpStatus.CONFLICT, "Fencing token mismatch"),
    LEASE_NOT_ACTIVE(HttpStatus.CONFLICT, "Lease not active"),
    IDEMPOTENCY_KEY_REUSED(HttpStatus.UNPROCESSABLE_CONTENT, "Idempotency key reused"),
    LEASE_EXPIRED(HttpStatus.GONE, "Lease expired"),
    LEASE_RELEASED(HttpStatus.GONE, "Lease released"),
    LEASE_REVOKED(HttpStatus.GONE, "Lease revoked"),
    /** The tenant has as many active leases as its quota allows (leasekeeper.limits.max-active-leases-per-tenant). */
    QUOTA_EXCEEDED(HttpStatus.TOO_MANY_REQUESTS, "Quota exceeded"),
    /** The tenant sent more requests than this instance takes from it (leasekeeper.limits.requests-per-second-per-tenant). */
    RATE_LIMITED(HttpStatus.TOO_MANY_REQUESTS, "Rate limited"),
    /**
     * The instance is busy, and the tenant's queue for it is full or the request waited its share too long
     * (leasekeeper.limits.*): load a client caused, never a 5xx.
     */
    TENANT_BUSY(HttpStatus.TOO_MANY_REQUESTS, "Tenant busy"),
    INTERNAL_ERROR(HttpStatus.INTERNAL_SERVER_ERROR, "Internal error"),
    /** PostgreSQL cannot be reached: nothing was decided, the client retries after Retry-After. */
    DATABASE_UNAVAILABLE(HttpStatus.SERVICE_UNAVAILABLE, "Database unavailable"),
    /**
     * The issuer's token keys have never been fetched and cannot be now, so no token can be checked: the client
     * retries after Retry-After. Once a key set has been fetched, a failed refetch keeps using it.
     */
    TOKEN_KEYS_UNAVAILABLE(HttpStatus.SERVICE_UNAVAILABLE, "Token keys unavailable");

    private final HttpStatus status;
    private final String title;

    ErrorCode(HttpStatus status, String title) {
        this.status = status;
        this.title = title;
    }

    public HttpStatus status() {
        return status;
    }

    public String title() {
        return title;
    }

    /**
     * The problem {@code type}: a relative URI reference naming the code ({@code /problems/lease-held}), documented in
     * docs/reference/errors.md, each code under its name in lower case (docs/reference/errors.md#lease_held).
     */
    public String typeUri() {
        return "/problems/" + name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
