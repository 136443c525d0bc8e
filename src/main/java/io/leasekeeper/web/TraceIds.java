package io.leasekeeper.web;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;
import org.slf4j.MDC;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Gives every request a trace id before anything else runs (security included), so that every problem
 * response, audit event and log line of the request carries the same id. The id is the W3C
 * {@code traceparent} trace id when the caller sent a valid one, else a fresh random one. The caller's
 * {@code X-Request-Id} (1..128 printable ASCII characters) is kept as the request id.
 */
public final class TraceIds extends OncePerRequestFilter {

    public static final String TRACE_ID_HEADER = "X-Trace-Id";
    public static final String REQUEST_ID_HEADER = "X-Request-Id";
    private static final String TRACE_ID = TraceIds.class.getName() + ".traceId";
    private static final String REQUEST_ID = TraceIds.class.getName() + ".requestId";
    private static final Pattern TRACEPARENT = Pattern.compile("[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}");
    private static final Pattern REQUEST_ID_VALUE = Pattern.compile("[\\x21-\\x7E]{1,128}");

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String traceId = traceIdOf(request.getHeader("traceparent"));
        request.setAttribute(TRACE_ID, traceId);
        String requestId = request.getHeader(REQUEST_ID_HEADER);
        if (requestId != null && REQUEST_ID_VALUE.matcher(requestId).matches()) {
            request.setAttribute(REQUEST_ID, requestId);
        }
        response.setHeader(TRACE_ID_HEADER, traceId);
        MDC.put("traceId", traceId);
        try {
            chain.doFilter(request, response);
        } finally {
            MDC.remove("traceId");
        }
    }

    public static String traceId(HttpServletRequest request) {
        Object id = request.getAttribute(TRACE_ID);
        return id != null ? (String) id : traceIdOf(request.getHeader("traceparent"));
    }

    public static String requestId(HttpServletRequest request) {
        return (String) request.getAttribute(REQUEST_ID);
    }

    /** A new random trace id, for answers given before this filter could run. */
    public static String fresh() {
        return traceIdOf(null);
    }

    private static String traceIdOf(String traceparent) {
        if (traceparent != null) {
            var m = TRACEPARENT.matcher(traceparent.trim());
            // Version ff is invalid, and so is an all-zero trace id (W3C Trace Context).
            if (m.matches() && !traceparent.trim().startsWith("ff") && !m.group(1).equals("0".repeat(32))) {
                return m.group(1);
            }
        }
        byte[] random = new byte[16];
        ThreadLocalRandom.current().nextBytes(random);
        return HexFormat.of().formatHex(random);
    }
}
