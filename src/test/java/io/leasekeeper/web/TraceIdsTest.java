package io.leasekeeper.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.tracing.Tracer;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/** The trace id without a span (tracing switched off); with one, SecurityTest and StructuredLogsTest pin it. */
class TraceIdsTest {

    @Test
    void withoutASpanEveryRequestGetsAFreshW3cTraceIdAndTraceparentIsIgnored() throws Exception {
        TraceIds filter = new TraceIds(Tracer.NOOP);
        String sent = "4bf92f3577b34da6a3ce929d0e0e4736";
        MockHttpServletRequest first = new MockHttpServletRequest("GET", "/v1/leases");
        first.addHeader("traceparent", "00-" + sent + "-00f067aa0ba902b7-01");
        MockHttpServletResponse firstResponse = new MockHttpServletResponse();
        filter.doFilter(first, firstResponse, new MockFilterChain());
        MockHttpServletRequest second = new MockHttpServletRequest("GET", "/v1/leases");
        MockHttpServletResponse secondResponse = new MockHttpServletResponse();
        filter.doFilter(second, secondResponse, new MockFilterChain());

        String id = TraceIds.traceId(first);
        assertThat(id).matches("[0-9a-f]{32}").isNotEqualTo("0".repeat(32)).isNotEqualTo(sent);
        assertThat(firstResponse.getHeader(TraceIds.TRACE_ID_HEADER)).isEqualTo(id);
        assertThat(TraceIds.traceId(second)).matches("[0-9a-f]{32}").isNotEqualTo(id);
    }
}
