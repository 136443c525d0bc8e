package io.leasekeeper.metrics;

import io.leasekeeper.config.LeasekeeperProperties;
import io.leasekeeper.idempotency.IdempotencyKeys;
import io.leasekeeper.security.TenantAttribute;
import io.leasekeeper.web.ErrorCode;
import io.leasekeeper.web.Problems;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Times every lease operation from the first filter to the last byte, tagged with the operation, its
 * outcome ({@code OK} or the contract's error code, a bounded set) and the answer's HTTP status, whether the
 * answer came from a controller, from security or from the body limit: the one timing of a request (the HTTP
 * request's own observation is off, docs/performance.md "The request's observation"). Derived from the same
 * outcome: acquires answered {@code LEASE_HELD}, idempotent replays, fencing-token mismatches and revocations. No per-key or
 * per-lease tag exists; a {@code tenant} tag is optional ({@code leasekeeper.metrics.tenant-tag}), capped at
 * {@code leasekeeper.metrics.max-tenants} distinct values.
 */
final class OperationMetrics extends OncePerRequestFilter {

    static final String TIMER = "leasekeeper.operation";
    private static final String OK = "OK";
    static final String NO_TENANT = "none";
    static final String OTHER_TENANTS = "other";
    private static final String UUID = "[0-9a-fA-F-]{1,64}";
    private static final Duration[] BUCKETS = {
            Duration.ofMillis(1), Duration.ofMillis(2), Duration.ofMillis(5), Duration.ofMillis(10),
            Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250),
            Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofMillis(2500), Duration.ofSeconds(5)};

    private record Route(String method, Pattern path, String operation) {
    }

    private static final List<Route> ROUTES = List.of(
            new Route("POST", Pattern.compile("/v1/leases/?"), "acquire"),
            new Route("POST", Pattern.compile("/v1/leases/" + UUID + "/renew"), "renew"),
            new Route("POST", Pattern.compile("/v1/leases/" + UUID + "/release"), "release"),
            new Route("POST", Pattern.compile("/v1/admin/leases/" + UUID + "/revoke"), "revoke"),
            new Route("GET", Pattern.compile("/v1/leases/current"), "inspect"),
            new Route("GET", Pattern.compile("/v1/leases/" + UUID + "/events"), "history"),
            new Route("GET", Pattern.compile("/v1/leases/" + UUID), "inspect"),
            new Route("GET", Pattern.compile("/v1/leases/?"), "list"));

    private final Meter.MeterProvider<Timer> timers;
    private final Meter.MeterProvider<Counter> mismatches;
    private final Meter.MeterProvider<Counter> replays;
    private final Counter contended;
    private final Counter revocations;
    private final boolean tenantTag;
    private final int maxTenants;
    private final Set<String> tenants = ConcurrentHashMap.newKeySet();

    OperationMetrics(MeterRegistry registry, LeasekeeperProperties.Metrics settings) {
        this.tenantTag = settings.tenantTag();
        this.maxTenants = settings.maxTenants();
        this.timers = Timer.builder(TIMER)
                .description("Lease operations, by operation and outcome (OK or the contract's code)")
                .serviceLevelObjectives(BUCKETS).withRegistry(registry);
        this.mismatches = Counter.builder("leasekeeper.fencing.mismatches")
                .description("Renewals and releases refused because the fencing token did not match")
                .withRegistry(registry);
        this.replays = Counter.builder("leasekeeper.idempotent.replays")
                .description("Retried requests answered from their first answer (Idempotency-Key)")
                .withRegistry(registry);
        this.contended = Counter.builder("leasekeeper.acquire.contended")
                .description("Acquires answered LEASE_HELD: the key was held by another holder").register(registry);
        this.revocations = Counter.builder("leasekeeper.revocations")
                .description("Leases revoked by an admin").register(registry);
        // At zero from the start, so that a rate over them exists before the first mismatch.
        mismatches.withTags("operation", "renew");
        mismatches.withTags("operation", "release");
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String operation = operationOf(request);
        if (operation == null) {
            chain.doFilter(request, response);
            return;
        }
        long start = System.nanoTime();
        try {
            chain.doFilter(request, response);
        } finally {
            record(operation, outcomeOf(request, response), request, response, System.nanoTime() - start);
        }
    }

    private void record(String operation, String outcome, HttpServletRequest request, HttpServletResponse response,
                        long nanos) {
        String status = Integer.toString(response.getStatus());
        Timer timer = tenantTag
                ? timers.withTags("operation", operation, "outcome", outcome, "status", status, "tenant",
                        tenantOf(request))
                : timers.withTags("operation", operation, "outcome", outcome, "status", status);
        timer.record(Duration.ofNanos(nanos));
        if (operation.equals("acquire") && outcome.equals(ErrorCode.LEASE_HELD.name())) {
            contended.increment();
        }
        if (operation.equals("revoke") && outcome.equals(OK)) {
            revocations.increment();
        }
        if (outcome.equals(ErrorCode.FENCING_TOKEN_MISMATCH.name())) {
            mismatches.withTags("operation", operation).increment();
        }
        if ("true".equals(response.getHeader(IdempotencyKeys.REPLAYED_HEADER))) {
            replays.withTags("operation", operation).increment();
        }
    }

    static String operationOf(HttpServletRequest request) {
        String path = request.getRequestURI();
        for (Route route : ROUTES) {
            if (route.method().equals(request.getMethod()) && route.path().matcher(path).matches()) {
                return route.operation();
            }
        }
        return null;
    }

    /** The caller's tenant while fewer than the cap have been seen; {@code other} after; {@code none} unauthenticated. */
    private String tenantOf(HttpServletRequest request) {
        if (!(request.getAttribute(TenantAttribute.NAME) instanceof String tenant)) {
            return NO_TENANT;
        }
        if (tenants.contains(tenant)) {
            return tenant;
        }
        synchronized (tenants) {
            if (tenants.size() < maxTenants) {
                tenants.add(tenant);
                return tenant;
            }
        }
        return OTHER_TENANTS;
    }

    private static String outcomeOf(HttpServletRequest request, HttpServletResponse response) {
        Object code = request.getAttribute(Problems.CODE_ATTRIBUTE);
        if (code != null) {
            return code.toString();
        }
        return response.getStatus() < 400 ? OK : "ERROR";
    }
}
