package io.leasekeeper.limits;

import io.leasekeeper.web.FilterOrder;
import io.leasekeeper.config.LeasekeeperProperties;
import io.leasekeeper.security.TenantAttribute;
import io.leasekeeper.web.ApiException;
import io.leasekeeper.web.ErrorCode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * An instance works on at most {@code leasekeeper.limits.requests-in-progress-per-tenant} requests of one tenant
 * at once (by default its processors). A request takes one of its tenant's turns after the rate limit admitted it
 * and before the handler runs, and gives it back when it completes; the tenant's further requests wait for a turn
 * (fairly, in arrival order) at most the pool's connection timeout, then answer as a request that found no
 * connection in that time does: 503 DATABASE_UNAVAILABLE with {@code Retry-After} (the turns are usually held
 * that long by requests waiting for the database). A flood from one tenant then waits in its own queue instead
 * of queueing ahead of other tenants' requests for the processors and the database: measured, with the rate
 * and the share of the pool alone a steady tenant's p99 was 3.0 to 3.8 times its quiet value while another
 * flooded, with these turns 1.6 to 2.6 times (docs/performance.md). A request that waits for a key or a
 * lease's end ({@link #aside}) gives its turn up while it waits.
 */
@Configuration(proxyBeanMethods = false)
public class TenantTurns implements HandlerInterceptor, WebMvcConfigurer {

    private static final String TURN = TenantTurns.class.getName() + ".turn";

    private final TenantPermits turns;
    private final long waitNanos;
    private final Counter refused;

    TenantTurns(LeasekeeperProperties properties, MeterRegistry registry,
                @Value("${spring.datasource.hikari.connection-timeout:30000}") long waitMillis) {
        this.turns = new TenantPermits(properties.limits().requestsInProgress());
        this.waitNanos = TimeUnit.MILLISECONDS.toNanos(waitMillis);
        this.refused = TenantLimits.refusals(registry, "in-progress");
    }

    @Override
    public void addInterceptors(InterceptorRegistry registry) {
        registry.addInterceptor(this).addPathPatterns("/v1/**").order(FilterOrder.TENANT_TURNS);
    }

    /** Turns one tenant has at an instance. */
    int turns() {
        return turns.permits();
    }

    /** Requests of the tenant waiting for a turn now (for tests and diagnosis). */
    int waiting(String tenant) {
        return turns.waiting(tenant);
    }

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
        if (!(request.getAttribute(TenantAttribute.NAME) instanceof String tenant)) {
            return true; // not authenticated: security has answered, or will
        }
        Semaphore turn = turns.of(tenant);
        boolean taken;
        try {
            taken = turn.tryAcquire(waitNanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the instance is stopping
            taken = false;
        }
        if (!taken) {
            refused.increment();
            throw new ApiException(ErrorCode.DATABASE_UNAVAILABLE, "The instance is working on " + turns.permits()
                    + " requests of the tenant and none ended in time; retry after 1 s.", 1);
        }
        request.setAttribute(TURN, turn);
        return true;
    }

    @Override
    public void afterCompletion(HttpServletRequest request, HttpServletResponse response, Object handler, Exception ex) {
        if (request.getAttribute(TURN) instanceof Semaphore turn) {
            request.removeAttribute(TURN);
            turn.release();
        }
    }

    /**
     * Runs a wait of the current request (for a key, for a lease's end) without its turn, so that the tenant's
     * other requests go ahead meanwhile, and takes a turn again before it goes on, however long that takes (the
     * requests holding the turns end within their statements' timeouts). Outside a request, or for a request
     * without a turn, just runs the wait.
     */
    public static <T> T aside(Supplier<T> wait) {
        RequestAttributes request = RequestContextHolder.getRequestAttributes();
        if (request == null || !(request.getAttribute(TURN, RequestAttributes.SCOPE_REQUEST) instanceof Semaphore turn)) {
            return wait.get();
        }
        turn.release();
        try {
            return wait.get();
        } finally {
            turn.acquireUninterruptibly();
        }
    }
}
