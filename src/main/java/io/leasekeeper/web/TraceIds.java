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
 * Names every request's trace before security or anything else of the service runs, so that every
 * problem response, audit event, lease and log line of the request carries the same id.
 *
 * <p>A caller's W3C {@code traceparent} is continued: its trace id is the request's. Without one, or with one
 * that is not W3C Trace Context, the request starts a new trace with a random id, as the W3C specification asks
 * of an invalid header. The request also gets a span id of its own. Both are in the logging MDC while the request
 * runs ({@code traceId}, {@code spanId}: Micrometer Tracing's names, which the structured log formats write), the
 * trace id is recorded on the request and answered in {@code X-Trace-Id}. The service reads the header itself
 * instead of observing each request with Micrometer Tracing: no span is exported, and that observation cost
 * about 5% of the service's CPU per request (docs/performance.md, "The request's observation").
 *
 * <p>The caller's {@code X-Request-Id} (1..128 printable ASCII characters) is kept as the request id.
 */
public final class TraceIds extends OncePerRequestFilter {

    public static final String TRACE_ID_HEADER = "X-Trace-Id";
    public static final String REQUEST_ID_HEADER = "X-Request-Id";
    static final String TRACEPARENT = "traceparent";
    /** The logging MDC's keys of the trace and span ids. */
    static final String MDC_TRACE_ID = "traceId";
    static final String MDC_SPAN_ID = "spanId";
    private static final String TRACE_ID = TraceIds.class.getName() + ".traceId";
    private static final String REQUEST_ID = TraceIds.class.getName() + ".requestId";
    private static final Pattern REQUEST_ID_VALUE = Pattern.compile("[\\x21-\\x7E]{1,128}");

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String traceparent = request.getHeader(TRACEPARENT);
        String traceId = traceparent != null && isValid(traceparent) ? traceparent.substring(3, 35) : fresh();
        request.setAttribute(TRACE_ID, traceId);
        String requestId = request.getHeader(REQUEST_ID_HEADER);
        if (requestId != null && REQUEST_ID_VALUE.matcher(requestId).matches()) {
            request.setAttribute(REQUEST_ID, requestId);
        }
        response.setHeader(TRACE_ID_HEADER, traceId);
        MDC.put(MDC_TRACE_ID, traceId);
        MDC.put(MDC_SPAN_ID, randomHex(8));
        try {
            chain.doFilter(request, response);
        } finally {
            MDC.remove(MDC_TRACE_ID);
            MDC.remove(MDC_SPAN_ID);
        }
    }

    /**
     * W3C Trace Context: {@code version-traceid-parentid-flags}, lowercase hex of 2, 32, 16 and 2 digits;
     * version {@code ff} is invalid, version {@code 00} is exactly that long, a later version may go on
     * after a {@code -}; neither id may be all zeros.
     */
    static boolean isValid(String value) {
        if (value.length() < 55 || !hex(value, 0, 2) || value.startsWith("ff")) {
            return false;
        }
        if (value.startsWith("00") ? value.length() != 55 : value.length() > 55 && value.charAt(55) != '-') {
            return false;
        }
        return value.charAt(2) == '-' && hex(value, 3, 35) && !zeros(value, 3, 35)
                && value.charAt(35) == '-' && hex(value, 36, 52) && !zeros(value, 36, 52)
                && value.charAt(52) == '-' && hex(value, 53, 55);
    }

    private static boolean hex(String s, int from, int to) {
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
                return false;
            }
        }
        return true;
    }

    private static boolean zeros(String s, int from, int to) {
        for (int i = from; i < to; i++) {
            if (s.charAt(i) != '0') {
                return false;
            }
        }
        return true;
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
        return randomHex(16);
    }

    /** That many random bytes in lowercase hex, never all zeros (W3C's ids). */
    private static String randomHex(int bytes) {
        byte[] random = new byte[bytes];
        ThreadLocalRandom.current().nextBytes(random);
        random[bytes - 1] |= 1;
        return HexFormat.of().formatHex(random);
    }
}
