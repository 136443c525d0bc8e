package io.leasekeeper.web;

import org.springframework.boot.security.autoconfigure.web.servlet.SecurityFilterProperties;
import org.springframework.core.Ordered;

/**
 * The order of everything that runs on a request before its controller, declared in this one place: the servlet
 * filters first (lowest order first), then Spring Security's chain, then Spring MVC's interceptors. Spring Boot's
 * HTTP observation filter is registered too, at its own order, but observes nothing
 * (management.observations.enable.http.server.requests is false: TraceIds names the trace, OperationMetrics times
 * the answers).
 */
public final class FilterOrder {

    /** The request's trace id, before anything else, security included. */
    public static final int TRACE_IDS = Ordered.HIGHEST_PRECEDENCE;
    /** Times every lease operation, so that every answer is timed: security's and the body limit's too. */
    public static final int OPERATION_METRICS = TRACE_IDS + 1;
    /**
     * The body's bounds, inside the timing: a declared length over the limit is answered here, from the header; the
     * body itself is only wrapped, and read by its handler, after security.
     */
    public static final int BODY_LIMIT = OPERATION_METRICS + 1;
    /** Spring Boot's own: Spring Security's chain, which authenticates and sets the tenant (not registered here). */
    public static final int SECURITY = SecurityFilterProperties.DEFAULT_FILTER_ORDER;

    /**
     * After the chain, the interceptors: a tenant's request rate first (a refused request waits for nothing), then
     * its slot among the instance's requests.
     */
    public static final int TENANT_RATE_LIMIT = 0;
    public static final int TENANT_SLOTS = TENANT_RATE_LIMIT + 1;

    private FilterOrder() {
    }
}
