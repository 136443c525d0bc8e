package io.leasekeeper.web;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * The request's trace id: a caller's W3C traceparent continued, anything else a new trace; in the logging MDC
 * while the request runs. SecurityTest and StructuredLogsTest pin it through the whole service.
 */
class TraceIdsTest {

    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String PARENT = "00f067aa0ba902b7";

    @Test
    void theW3cGrammarIsContinued() {
        for (String valid : List.of("00-" + TRACE + "-" + PARENT + "-01", "00-" + TRACE + "-" + PARENT + "-00",
                "01-" + TRACE + "-" + PARENT + "-01", "01-" + TRACE + "-" + PARENT + "-01-future-fields")) {
            assertThat(TraceIds.isValid(valid)).as(valid).isTrue();
            assertThat(traceIdOf(valid)).as(valid).isEqualTo(TRACE);
        }
    }

    @Test
    void everythingElseStartsANewTrace() {
        for (String invalid : List.of("", "00", "00-", "00-" + TRACE, "00-" + TRACE + "-" + PARENT,
                "00-" + TRACE + "-" + PARENT + "-1", "ff-" + TRACE + "-" + PARENT + "-01",
                "00-" + TRACE.toUpperCase() + "-" + PARENT + "-01",
                "00-" + "0".repeat(32) + "-" + PARENT + "-01", "00-" + TRACE + "-" + "0".repeat(16) + "-01",
                "00-" + TRACE + "-" + PARENT + "-01-", "01-" + TRACE + "-" + PARENT + "-01x",
                "00_" + TRACE + "_" + PARENT + "_01", "0g-" + TRACE + "-" + PARENT + "-01")) {
            assertThat(TraceIds.isValid(invalid)).as(invalid).isFalse();
            assertThat(traceIdOf(invalid)).as(invalid).matches("[0-9a-f]{32}").isNotEqualTo("0".repeat(32))
                    .isNotEqualTo(TRACE);
        }
    }

    @Test
    void everyRequestWithoutATraceparentGetsAFreshId() throws Exception {
        String first = traceIdOf(null);
        String second = traceIdOf(null);
        assertThat(first).matches("[0-9a-f]{32}").isNotEqualTo(second);
        assertThat(second).matches("[0-9a-f]{32}");
    }

    @Test
    void theIdsAreInTheLoggingContextWhileTheRequestRunsAndGoneAfter() throws Exception {
        MockHttpServletRequest request = new MockHttpServletRequest("GET", "/v1/leases");
        request.addHeader(TraceIds.TRACEPARENT, "00-" + TRACE + "-" + PARENT + "-01");
        MockHttpServletResponse response = new MockHttpServletResponse();
        List<String> seen = new ArrayList<>();
        HttpServlet servlet = new HttpServlet() {
            @Override
            protected void service(HttpServletRequest req, HttpServletResponse res) {
                seen.add(MDC.get("traceId"));
                seen.add(MDC.get("spanId"));
            }
        };
        new TraceIds().doFilter(request, response, new MockFilterChain(servlet));

        assertThat(seen.get(0)).isEqualTo(TRACE);
        assertThat(seen.get(1)).matches("[0-9a-f]{16}").isNotEqualTo(PARENT).isNotEqualTo("0".repeat(16));
        assertThat(response.getHeader(TraceIds.TRACE_ID_HEADER)).isEqualTo(TRACE);
        assertThat(TraceIds.traceId(request)).isEqualTo(TRACE);
        assertThat(MDC.get("traceId")).isNull();
        assertThat(MDC.get("spanId")).isNull();
    }

    private static String traceIdOf(String traceparent) {
        MockHttpServletRequest request = new MockHttpServletRequest("GET", "/v1/leases");
        if (traceparent != null) {
            request.addHeader(TraceIds.TRACEPARENT, traceparent);
        }
        MockHttpServletResponse response = new MockHttpServletResponse();
        try {
            new TraceIds().doFilter(request, response, new MockFilterChain());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        assertThat(response.getHeader(TraceIds.TRACE_ID_HEADER)).isEqualTo(TraceIds.traceId(request));
        return TraceIds.traceId(request);
    }
}
