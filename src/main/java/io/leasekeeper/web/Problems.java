package io.leasekeeper.web;

import jakarta.servlet.http.HttpServletRequest;
import java.net.URI;
import org.springframework.http.ProblemDetail;

/** Builds every problem body the service sends: RFC 9457 plus the contract's {@code code} and {@code traceId}. */
public final class Problems {

    /** The request attribute holding the code of the problem answered, for the operation metrics. */
    public static final String CODE_ATTRIBUTE = Problems.class.getName() + ".code";

    private Problems() {
    }

    public static ProblemDetail of(ErrorCode code, String detail, HttpServletRequest request) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(code.status(), detail);
        return decorate(problem, code, request);
    }

    /**
     * The code of an answer whose status the web stack or the servlet container chose itself (a route it does not
     * know, a request line it cannot parse): a status of its own where the contract has one, any other client error
     * {@link ErrorCode#REQUEST_REJECTED}, anything else {@link ErrorCode#INTERNAL_ERROR}.
     */
    static ErrorCode codeFor(int status) {
        return switch (status) {
            case 404 -> ErrorCode.NOT_FOUND;
            case 405 -> ErrorCode.METHOD_NOT_ALLOWED;
            case 406 -> ErrorCode.NOT_ACCEPTABLE;
            case 413 -> ErrorCode.REQUEST_TOO_LARGE;
            case 415 -> ErrorCode.UNSUPPORTED_MEDIA_TYPE;
            default -> status >= 400 && status < 500 ? ErrorCode.REQUEST_REJECTED : ErrorCode.INTERNAL_ERROR;
        };
    }

    /** Adds the contract's fields to a problem Spring built, keeping its status and detail. */
    public static ProblemDetail decorate(ProblemDetail problem, ErrorCode code, HttpServletRequest request) {
        problem.setType(URI.create(code.typeUri()));
        problem.setTitle(code.title());
        problem.setProperty("code", code.name());
        problem.setProperty("traceId", TraceIds.traceId(request));
        if (request != null) {
            request.setAttribute(CODE_ATTRIBUTE, code.name());
        }
        if (request != null && problem.getInstance() == null) {
            problem.setInstance(URI.create(request.getRequestURI()));
        }
        return problem;
    }
}
