package io.leasekeeper.web;

import io.leasekeeper.web.FieldErrors.FieldError;
import io.leasekeeper.web.FieldErrors.ValidationFailed;
import jakarta.servlet.http.HttpServletRequest;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.TypeMismatchException;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.dao.TransientDataAccessResourceException;
import org.springframework.jdbc.UncategorizedSQLException;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
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
import tools.jackson.core.JacksonException;

/**
 * The one place where failures become problem responses. A client mistake is always a 4xx with the
 * contract's code; anything unexpected is a 500 whose body says nothing about the internals.
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
        ResponseEntity.BodyBuilder answer = ResponseEntity.status(e.code().status());
        if (e.retryAfterSeconds() > 0) {
            answer.header(HttpHeaders.RETRY_AFTER, Long.toString(e.retryAfterSeconds()));
        }
        return answer.body(problem);
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
        return ResponseEntity.status(ErrorCode.DATABASE_UNAVAILABLE.status())
                .header(HttpHeaders.RETRY_AFTER, DATABASE_RETRY_AFTER_SECONDS)
                .body(Problems.of(ErrorCode.DATABASE_UNAVAILABLE,
                        what + " Retry later; a retry with the same Idempotency-Key is safe.", request));
    }

    @ExceptionHandler(Exception.class)
    ResponseEntity<ProblemDetail> unexpected(Exception e, HttpServletRequest request) {
        log.error("Unexpected failure on {} {}", request.getMethod(), request.getRequestURI(), e);
        return ResponseEntity.internalServerError()
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
        return validationFailed(bodyError(e), headers, request);
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
        ErrorCode code = codeFor(status);
        Problems.decorate(problem, code, servletRequest(request));
        if (code == ErrorCode.VALIDATION_FAILED && !(problem.getProperties() != null
                && problem.getProperties().containsKey("errors"))) {
            // The contract promises an errors list with every VALIDATION_FAILED.
            problem.setProperty("errors", List.of(new FieldError("request",
                    problem.getDetail() == null ? "is not valid" : problem.getDetail())));
        }
        return super.handleExceptionInternal(e, problem, headers, status, request);
    }

    private ResponseEntity<Object> validationFailed(FieldError error, HttpHeaders headers, WebRequest request) {
        HttpServletRequest servletRequest = servletRequest(request);
        ProblemDetail problem = Problems.of(ErrorCode.VALIDATION_FAILED, error.field() + " " + error.message(),
                servletRequest);
        problem.setProperty("errors", List.of(error));
        return ResponseEntity.badRequest().headers(headers).body(problem);
    }

    /** Names the JSON field at fault without echoing parser internals. */
    private static FieldError bodyError(HttpMessageNotReadableException e) {
        for (Throwable t = e.getCause(); t != null; t = t.getCause()) {
            if (t instanceof JacksonException j) {
                String path = path(j);
                if (path.isEmpty()) {
                    return new FieldError("body", "is not valid JSON of the expected shape");
                }
                return new FieldError(path, "has the wrong type or an out-of-range value");
            }
        }
        return new FieldError("body", "is missing or not valid JSON");
    }

    private static String path(JacksonException e) {
        StringBuilder path = new StringBuilder();
        for (JacksonException.Reference ref : e.getPath()) {
            if (ref.getPropertyName() != null) {
                path.append(path.isEmpty() ? "" : ".").append(ref.getPropertyName());
            } else if (ref.getIndex() >= 0) {
                path.append('[').append(ref.getIndex()).append(']');
            }
        }
        return path.toString();
    }

    private static ErrorCode codeFor(HttpStatusCode status) {
        return switch (HttpStatus.valueOf(status.value())) {
            case BAD_REQUEST -> ErrorCode.VALIDATION_FAILED;
            case NOT_FOUND -> ErrorCode.NOT_FOUND;
            case METHOD_NOT_ALLOWED -> ErrorCode.METHOD_NOT_ALLOWED;
            case NOT_ACCEPTABLE -> ErrorCode.NOT_ACCEPTABLE;
            case UNSUPPORTED_MEDIA_TYPE -> ErrorCode.UNSUPPORTED_MEDIA_TYPE;
            case CONTENT_TOO_LARGE -> ErrorCode.REQUEST_TOO_LARGE;
            default -> status.is4xxClientError() ? ErrorCode.REQUEST_REJECTED : ErrorCode.INTERNAL_ERROR;
        };
    }

    private static HttpServletRequest servletRequest(WebRequest request) {
        return ((NativeWebRequest) request).getNativeRequest(HttpServletRequest.class);
    }
}
