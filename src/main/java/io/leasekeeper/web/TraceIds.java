package io.leasekeeper.web;

import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Names every request's trace before security or anything else of the service runs, so that every
 * problem response, audit event, lease and log line of the request carries the same id.
 *
 * <p>The trace is Micrometer Tracing's: Spring MVC's observation filter, which runs just before this
 * one, continues the caller's W3C {@code traceparent} (or starts a new trace when it sent none or an
 * invalid one) and keeps the span's {@code traceId} and {@code spanId} in the logging MDC. This filter
 * only records the span's trace id on the request and answers it in {@code X-Trace-Id}. Where there is
 * no span (tracing switched off), the id is a fresh random one, so that problems, events and the lease
 * of a request are still correlated with each other.
 *
 * <p>The caller's {@code X-Request-Id} (1..128 printable ASCII characters) is kept as the request id.
 */
public final class TraceIds extends OncePerRequestFilter {

    public static final String TRACE_ID_HEADER = "X-Trace-Id";
    public static final String REQUEST_ID_HEADER = "X-Request-Id";
    private static final String TRACE_ID = TraceIds.class.getName() + ".traceId";
    private static final String REQUEST_ID = TraceIds.class.getName() + ".requestId";
    private static final Pattern TRACE_ID_VALUE = Pattern.compile("[0-9a-f]{32}");
    private static final Pattern REQUEST_ID_VALUE = Pattern.compile("[\\x21-\\x7E]{1,128}");

    private final Tracer tracer;

    public TraceIds(Tracer tracer) {
        this.tracer = tracer;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        Span span = tracer.currentSpan();
        String traceId = span != null ? span.context().traceId() : null;
        if (traceId == null || !TRACE_ID_VALUE.matcher(traceId).matches()) {
            traceId = fresh();
        }
        request.setAttribute(TRACE_ID, traceId);
        String requestId = request.getHeader(REQUEST_ID_HEADER);
        if (requestId != null && REQUEST_ID_VALUE.matcher(requestId).matches()) {
            request.setAttribute(REQUEST_ID, requestId);
        }
        response.setHeader(TRACE_ID_HEADER, traceId);
        chain.doFilter(request, response);
    }

    /** The request's trace id; a fresh one for a request this filter has not seen. */
    public static String traceId(HttpServletRequest request) {
        Object id = request.getAttribute(TRACE_ID);
        return id != null ? (String) id : fresh();
    }

    public static String requestId(HttpServletRequest request) {
        return (String) request.getAttribute(REQUEST_ID);
    }

    /** A new random trace id (W3C: 32 lowercase hex digits, not all zero), for answers given before this filter runs. */
    public static String fresh() {
        byte[] random = new byte[16];
        ThreadLocalRandom.current().nextBytes(random);
        random[15] |= 1;
        return HexFormat.of().formatHex(random);
    }
}
