package io.leasekeeper.web;

/** A broken contract a client caused (or a lease no longer in the state it needs), answered as a problem. */
public class ApiException extends RuntimeException {

    private final ErrorCode code;
    private final long retryAfterSeconds;

    public ApiException(ErrorCode code, String detail) {
        this(code, detail, 0);
    }

    /** A refusal the client may retry after {@code retryAfterSeconds} (sent as {@code Retry-After}; 0: none). */
    public ApiException(ErrorCode code, String detail, long retryAfterSeconds) {
        super(detail, null, false, false);
        this.code = code;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    public ErrorCode code() {
        return code;
    }

    public long retryAfterSeconds() {
        return retryAfterSeconds;
    }
}
