package io.leasekeeper.web;

import io.leasekeeper.web.FieldErrors.FieldError;
import io.leasekeeper.web.FieldErrors.ValidationFailed;
import jakarta.servlet.http.HttpServletRequest;
import java.util.List;
import org.apache.tomcat.util.http.InvalidParameterException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.TypeMismatchException;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.dao.TransientDataAccessResourceException;
import org.springframework.jdbc.UncategorizedSQLException;
import org.springframework.security.web.firewall.RequestRejectedException;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.bind.MissingServletRequestParameterException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.NativeWebRequest;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.method.annotation.MethodArgumentTypeMismatchException;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

/**
 * The one place where failures become problem responses. A client mistake is always a 4xx with the
 * contract's code, logged at most as one line; anything unexpected is a 500 whose body says nothing about the
 * internals. Every problem is sent as {@code application/problem+json} whatever the request's {@code Accept} says,
 * so that an {@code Accept} header nobody can parse still gets its 406 problem rather than an empty answer.
 */
@RestControllerAdvice
public class ApiProblems extends ResponseEntityExceptionHandler {

    private static final Logger log = LoggerFactory.getLogger(ApiProblems.class);
    private static final String DATABASE_RETRY_AFTER_SECONDS = "2";
    /** PostgreSQL's SQLSTATE for a lock wait ended by lock_timeout. */
    private static final String LOCK_NOT_AVAILABLE = "55P03";

    @ExceptionHandler(ApiException.class)
    ResponseEntity<ProblemDetail> api(ApiException e, HttpServletRequest request) {
        ProblemDetail problem = Problems.of(e.code(), e.getMessage(), request);
        if (e instanceof ValidationFailed v) {
            problem.setProperty("errors", v.errors());
        }
        ResponseEntity.BodyBuilder answer = problem(e.code().status());
        if (e.retryAfterSeconds() > 0) {
            answer.header(HttpHeaders.RETRY_AFTER, Long.toString(e.retryAfterSeconds()));
        }
        return answer.body(problem);
    }

    /**
     * Tomcat could not read the query string or a form body as parameters: more than
     * {@code server.tomcat.max-parameter-count}, a pair without a name, an escape that is not percent-encoded
     * UTF-8 (413 for a form body over Tomcat's own size bound). The client's mistake, so no stack trace and no
     * log line; Tomcat's message quotes the parameters, so the problem does not repeat it.
     */
    @ExceptionHandler(InvalidParameterException.class)
    ResponseEntity<ProblemDetail> parametersUnreadable(InvalidParameterException e, HttpServletRequest request) {
        ErrorCode code = e.getErrorCode() == HttpStatus.CONTENT_TOO_LARGE.value()
                ? ErrorCode.REQUEST_TOO_LARGE : ErrorCode.REQUEST_REJECTED;
        return problem(code.status()).body(Problems.of(code, "The query string or form body could not be read as"
                + " parameters: too many of them, a pair without a name, or an escape that is not UTF-8.", request));
    }

    /**
     * Spring Security's firewall checks a header (or parameter) when it is read, so a value it refuses (a control
     * character, an unassigned one) is found while a controller runs, not in the security chain, whose handler answers
     * the URLs it refuses.
     */
    @ExceptionHandler(RequestRejectedException.class)
    ResponseEntity<ProblemDetail> firewallRejected(RequestRejectedException e, HttpServletRequest request) {
        return problem(ErrorCode.REQUEST_REJECTED.status()).body(Problems.of(ErrorCode.REQUEST_REJECTED,
                "A header or parameter of the request holds characters that are not acceptable.", request));
    }

    /**
     * A body whose {@code Content-Type} is a wildcard ({@code *}{@code /*}, {@code application/*}) names no type, and
     * Spring's request headers refuse to hold one (with an IllegalArgumentException, as they would a bug): the
     * client's 415. Any other IllegalArgumentException is unexpected.
     */
    @ExceptionHandler(IllegalArgumentException.class)
    ResponseEntity<ProblemDetail> illegalArgument(IllegalArgumentException e, HttpServletRequest request) {
        if (!isWildcard(request.getContentType())) {
            return unexpected(e, request);
        }
        return problem(ErrorCode.UNSUPPORTED_MEDIA_TYPE.status()).body(Problems.of(ErrorCode.UNSUPPORTED_MEDIA_TYPE,
                "The request body's Content-Type must name one media type, not a wildcard.", request));
    }

    private static boolean isWildcard(String contentType) {
        try {
            return contentType != null && !MediaType.parseMediaType(contentType).isConcrete();
        } catch (InvalidMediaTypeException e) {
            return false;
        }
    }

    /**
     * No connection, or the connection broke (also while committing or rolling back, so the outcome of a
     * write may be unknown to this instance). The wait for a connection is bounded by the pool's
     * connection timeout. A retry with the same Idempotency-Key never acts twice.
     */
    @ExceptionHandler({DataAccessResourceFailureException.class, CannotCreateTransactionException.class,
            TransientDataAccessResourceException.class, TransactionSystemException.class})
    ResponseEntity<ProblemDetail> databaseUnavailable(Exception e, HttpServletRequest request) {
        log.warn("Database unavailable on {} {}: {}", request.getMethod(), request.getRequestURI(), e.toString());
        return databaseUnavailable("The database is unavailable.", request);
    }

    /**
     * PostgreSQL gave up on a statement: it waited longer than {@code lock_timeout} for a row lock (a key held
     * by a transaction that does not end) or ran longer than {@code statement_timeout}. Nothing was written;
     * a retry may find the database answering again.
     */
    @ExceptionHandler({CannotAcquireLockException.class, QueryTimeoutException.class, UncategorizedSQLException.class})
    ResponseEntity<ProblemDetail> databaseTimeout(Exception e, HttpServletRequest request) {
        // Spring leaves lock_not_available (55P03) uncategorized for PostgreSQL; anything else uncategorized is a bug.
        if (e instanceof UncategorizedSQLException u && (u.getSQLException() == null
                || !LOCK_NOT_AVAILABLE.equals(u.getSQLException().getSQLState()))) {
            return unexpected(e, request);
        }
        log.warn("Database timeout on {} {}: {}", request.getMethod(), request.getRequestURI(), e.toString());
        return databaseUnavailable("The database did not answer in time.", request);
    }

    /** 503 DATABASE_UNAVAILABLE with Retry-After: nothing was decided, and a retry may find the database answering. */
    private static ResponseEntity<ProblemDetail> databaseUnavailable(String what, HttpServletRequest request) {
        return problem(ErrorCode.DATABASE_UNAVAILABLE.status())
                .header(HttpHeaders.RETRY_AFTER, DATABASE_RETRY_AFTER_SECONDS)
                .body(Problems.of(ErrorCode.DATABASE_UNAVAILABLE,
                        what + " Retry later; a retry with the same Idempotency-Key is safe.", request));
    }

    @ExceptionHandler(Exception.class)
    ResponseEntity<ProblemDetail> unexpected(Exception e, HttpServletRequest request) {
        log.error("Unexpected failure on {} {}", request.getMethod(), request.getRequestURI(), e);
        return problem(HttpStatus.INTERNAL_SERVER_ERROR)
                .body(Problems.of(ErrorCode.INTERNAL_ERROR, "The request could not be completed.", request));
    }

    @Override
    protected ResponseEntity<Object> handleHttpMessageNotReadable(HttpMessageNotReadableException e,
            HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        BodyRefused refused = BodyRefused.among(e);
        if (refused != null) {
            return ResponseEntity.status(refused.status()).headers(headers)
                    .body(refused.problem(servletRequest(request)));
        }
        return validationFailed(JsonBodies.error(e.getCause()), headers, request);
    }

    @Override
    protected ResponseEntity<Object> handleTypeMismatch(TypeMismatchException e, HttpHeaders headers,
            HttpStatusCode status, WebRequest request) {
        String field = e instanceof MethodArgumentTypeMismatchException m ? m.getName() : e.getPropertyName();
        return validationFailed(new FieldError(field, "has the wrong type"), headers, request);
    }

    @Override
    protected ResponseEntity<Object> handleMissingServletRequestParameter(MissingServletRequestParameterException e,
            HttpHeaders headers, HttpStatusCode status, WebRequest request) {
        return validationFailed(new FieldError(e.getParameterName(), "is required"), headers, request);
    }

    /** Every problem Spring MVC builds itself (404 route, 405, 415, ...) gets the contract's fields too. */
    @Override
    protected ResponseEntity<Object> handleExceptionInternal(Exception e, Object body, HttpHeaders headers,
            HttpStatusCode status, WebRequest request) {
        ProblemDetail problem = body instanceof ProblemDetail p ? p : ProblemDetail.forStatus(status);
        ErrorCode code = status.value() == HttpStatus.BAD_REQUEST.value() ? ErrorCode.VALIDATION_FAILED
                : Problems.codeFor(status.value());
        Problems.decorate(problem, code, servletRequest(request));
        if (code == ErrorCode.VALIDATION_FAILED && !(problem.getProperties() != null
                && problem.getProperties().containsKey("errors"))) {
            // The contract promises an errors list with every VALIDATION_FAILED.
            problem.setProperty("errors", List.of(new FieldError("request",
                    problem.getDetail() == null ? "is not valid" : problem.getDetail())));
        }
        return super.handleExceptionInternal(e, problem, headers, status, request);
    }

    @Override
    protected ResponseEntity<Object> createResponseEntity(Object body, HttpHeaders headers, HttpStatusCode status,
            WebRequest request) {
        HttpHeaders problemHeaders = HttpHeaders.copyOf(headers);
        problemHeaders.setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        return new ResponseEntity<>(body, problemHeaders, status);
    }

    /** A problem's answer: its type set here, so that content negotiation never leaves out the body. */
    private static ResponseEntity.BodyBuilder problem(HttpStatusCode status) {
        return ResponseEntity.status(status).contentType(MediaType.APPLICATION_PROBLEM_JSON);
    }

    private ResponseEntity<Object> validationFailed(FieldError error, HttpHeaders headers, WebRequest request) {
        HttpServletRequest servletRequest = servletRequest(request);
        ProblemDetail problem = Problems.of(ErrorCode.VALIDATION_FAILED, error.field() + " " + error.message(),
                servletRequest);
        problem.setProperty("errors", List.of(error));
        return createResponseEntity(problem, headers, HttpStatus.BAD_REQUEST, request);
    }

    private static HttpServletRequest servletRequest(WebRequest request) {
        return ((NativeWebRequest) request).getNativeRequest(HttpServletRequest.class);
    }
}
