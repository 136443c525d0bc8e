package io.leasekeeper.web;

/** A broken contract a client caused (or a lease no longer in the state it needs), answered as a problem. */
public class ApiException extends RuntimeException {

    private final ErrorCode code;

    public ApiException(ErrorCode code, String detail) {
        super(detail, null, false, false);
        this.code = code;
    }

    public ErrorCode code() {
        return code;
    }
}
