package io.leasekeeper.web;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Hides a {@code traceparent} that is not a W3C Trace Context header (and the {@code tracestate} that goes
 * with it) from the tracing that runs next, which then starts a new trace, as the W3C specification asks of
 * an invalid header. Brave's parser, reached through Micrometer's propagator, throws on some malformed
 * values (such as {@code 00}), which would answer a client's bad header with a 500.
 */
public final class TraceparentGuard extends OncePerRequestFilter {

    static final String TRACEPARENT = "traceparent";
    static final String TRACESTATE = "tracestate";

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String traceparent = request.getHeader(TRACEPARENT);
        chain.doFilter(traceparent == null || isValid(traceparent) ? request : new WithoutTraceContext(request),
                response);
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

    private static final class WithoutTraceContext extends HttpServletRequestWrapper {

        WithoutTraceContext(HttpServletRequest request) {
            super(request);
        }

        private static boolean hidden(String name) {
            return TRACEPARENT.equalsIgnoreCase(name) || TRACESTATE.equalsIgnoreCase(name);
        }

        @Override
        public String getHeader(String name) {
            return hidden(name) ? null : super.getHeader(name);
        }

        @Override
        public Enumeration<String> getHeaders(String name) {
            return hidden(name) ? Collections.emptyEnumeration() : super.getHeaders(name);
        }

        @Override
        public Enumeration<String> getHeaderNames() {
            List<String> names = Collections.list(super.getHeaderNames());
            names.removeIf(WithoutTraceContext::hidden);
            return Collections.enumeration(names);
        }
    }
}
