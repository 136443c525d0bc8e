package io.leasekeeper.web;

import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.time.Duration;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;

/**
 * A request body refused while it was read ({@link BodyLimit}): over the size limit (413 {@code REQUEST_TOO_LARGE})
 * or too slow to arrive (408 {@code REQUEST_REJECTED}, the code of every other 4xx the container answers, as Tomcat's
 * own read timeout does). An {@link IOException}, so that whoever reads the body passes it on as a failed read; the
 * message converters wrap it, and {@link ApiProblems} finds it among the causes.
 */
public final class BodyRefused extends IOException {

    private final HttpStatus status;
    private final ErrorCode code;

    private BodyRefused(HttpStatus status, ErrorCode code, String detail) {
        super(detail);
        this.status = status;
        this.code = code;
    }

    static BodyRefused tooLarge() {
        return new BodyRefused(HttpStatus.CONTENT_TOO_LARGE, ErrorCode.REQUEST_TOO_LARGE,
                "The request body must be at most " + BodyLimit.MAX_BODY_BYTES + " bytes.");
    }

    static BodyRefused tooSlow(Duration timeout) {
        return new BodyRefused(HttpStatus.REQUEST_TIMEOUT, ErrorCode.REQUEST_REJECTED,
                "The request body did not arrive within " + timeout.toMillis() + " ms of waiting for it.");
    }

    /** The refusal among {@code e}'s causes (or {@code e} itself), or null when the failure was another. */
    public static BodyRefused among(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof BodyRefused refused) {
                return refused;
            }
        }
        return null;
    }

    public HttpStatus status() {
        return status;
    }

    /** The problem that answers the request: this status, the code and the detail. */
    public ProblemDetail problem(HttpServletRequest request) {
        return Problems.decorate(ProblemDetail.forStatusAndDetail(status, getMessage()), code, request);
    }
}
