package io.leasekeeper.limits;

import io.leasekeeper.config.LeasekeeperProperties;
import io.leasekeeper.security.TenantAttribute;
import io.leasekeeper.web.ApiException;
import io.leasekeeper.web.ErrorCode;
import io.leasekeeper.web.FilterOrder;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.function.Supplier;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * How an instance shares its work among tenants (contract 1.2, "Load a client caused is never a 5xx"): it works on
 * a bounded number of requests at once, its slots, and hands them out fairly ({@link FairSlots}). A tenant alone may
 * take every slot; tenants that compete get equal shares, and a tenant's excess waits in its own queue.
 *
 * <p>How many slots: {@code leasekeeper.limits.requests-in-progress} when set; by default as many as keep the
 * instance just short of queueing inside itself ({@link LatencyLimit}, from the time requests hold their slots),
 * between the processors' count and the connection pool's size (each request needs a connection, and more in
 * flight would only queue for one). A request in a slot then shares the processors with a few others rather than
 * with every other tenant's burst; the rest wait in their tenant's queue, where fairness orders them.
 *
 * <p>A request takes its slot after the rate limit admitted it and before the handler runs, and gives it back when
 * it completes. A request its tenant's queue has no room for, or that waited
 * {@code queue-timeout} for a slot, answers 429 TENANT_BUSY with {@code Retry-After}: load a client caused, never
 * a 5xx. Since a tenant queues only behind the instance's other work, a tenant alone sees TENANT_BUSY only when the
 * instance is saturated. A request that waits for a key or a lease's end ({@link #aside}) gives its slot up while
 * it waits.
 *
 * <p>Slots that do not come free because the database does not answer are not load: while the requests holding
 * slots end in 503 (the last one to end did, and none has been served since), a request refused a slot answers
 * 503 DATABASE_UNAVAILABLE as they do, not 429.
 */
@Configuration(proxyBeanMethods = false)
public class TenantSlots implements HandlerInterceptor, WebMvcConfigurer {

    private static final String SLOT = TenantSlots.class.getName() + ".slot";

    /** The slot a request holds: whose, where it goes back, since when, and how many were held with it. */
    private record Slot(TenantSlots owner, String tenant, long since, int inFlight) {
    }

    private final FairSlots slots;
    /** Adapts the slots to the time requests hold them; null when the setting fixes their number. */
    private final LatencyLimit limit;
    private final long queueTimeoutNanos;
    private final Counter queueFull;
    private final Counter waitedTooLong;
    /** Whether the last request to give its slot back had answered 503: the database, not load, holds the slots. */
    private volatile boolean databaseFailing;

    TenantSlots(LeasekeeperProperties properties, MeterRegistry registry,
                @Value("${spring.datasource.hikari.maximum-pool-size:10}") int poolSize) {
        LeasekeeperProperties.Limits limits = properties.limits();
        if (limits.requestsInProgress() > 0) {
            this.slots = new FairSlots(limits.requestsInProgress(), limits.queuePerTenant());
            this.limit = null;
        } else {
            // Fewer slots than processors would idle them while requests wait on the database.
            int fewest = Math.min(poolSize, Math.max(2, Runtime.getRuntime().availableProcessors()));
            this.slots = new FairSlots(poolSize, limits.queuePerTenant());
            this.limit = new LatencyLimit(fewest, poolSize, slots::resize);
        }
        this.queueTimeoutNanos = limits.queueTimeout().toNanos();
        this.queueFull = TenantLimits.refusals(registry, "queue-full");
        this.waitedTooLong = TenantLimits.refusals(registry, "queue-timeout");
        Gauge.builder("leasekeeper.limits.slots", slots, FairSlots::slots)
                .description("Requests this instance works on at once now (leasekeeper.limits.requests-in-progress,"
                        + " or adapted to the time they take)")
                .register(registry);
        Gauge.builder("leasekeeper.limits.in.progress", slots, FairSlots::inUse)
                .description("Requests holding one of the instance's slots now").register(registry);
        Gauge.builder("leasekeeper.limits.queued", slots, FairSlots::queued)
                .description("Requests waiting in their tenant's queue for a slot now").register(registry);
    }

    @Override
    public void addInterceptors(InterceptorRegistry registry) {
        registry.addInterceptor(this).addPathPatterns("/v1/**").order(FilterOrder.TENANT_SLOTS);
    }

    /** The instance's slots, and the tenant's requests queued for them (for tests and diagnosis). */
    int slots() {
        return slots.slots();
    }

    int queued(String tenant) {
        return slots.queued(tenant);
    }

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
        if (!(request.getAttribute(TenantAttribute.NAME) instanceof String tenant)) {
            return true; // not authenticated: security has answered, or will
        }
        int inFlight;
        try {
            inFlight = slots.take(tenant, queueTimeoutNanos);
        } catch (FairSlots.RefusedException refused) {
            if (databaseFailing) {
                throw new ApiException(ErrorCode.DATABASE_UNAVAILABLE, "The instance's requests are waiting for the"
                        + " database, which does not answer; retry after 2 s.", 2);
            }
            boolean full = refused.reason() == FairSlots.Refused.QUEUE_FULL;
            (full ? queueFull : waitedTooLong).increment();
            throw new ApiException(ErrorCode.TENANT_BUSY, (full
                    ? "The instance is busy, and the tenant has as many requests queued for it as it may"
                    : "The instance is busy, and the request waited too long for its tenant's share")
                    + "; retry after 1 s.", 1);
        }
        request.setAttribute(SLOT, new Slot(this, tenant, System.nanoTime(), inFlight));
        return true;
    }

    @Override
    public void afterCompletion(HttpServletRequest request, HttpServletResponse response, Object handler, Exception ex) {
        if (request.getAttribute(SLOT) instanceof Slot slot) {
            request.removeAttribute(SLOT);
            boolean failing = response.getStatus() == ErrorCode.DATABASE_UNAVAILABLE.status().value();
            if (failing != databaseFailing) {
                databaseFailing = failing;
            }
            give(slot, failing);
        }
    }

    /**
     * Gives the slot back, and tells the limit how long it was held, unless the database failed it: a request that
     * waited for a database that does not answer says nothing of the load.
     */
    private void give(Slot slot, boolean databaseFailed) {
        slots.release(slot.tenant()); // first: a change of the limit resizes the slots, under their lock
        if (limit != null && !databaseFailed) {
            limit.sample(slot.since(), System.nanoTime() - slot.since(), slot.inFlight());
        }
    }

    /**
     * Runs a wait of the current request (for a key, for a lease's end) without its slot, so that other requests
     * go ahead meanwhile, and takes a slot again before it goes on, however long that takes. Outside a request, or
     * for a request without a slot, just runs the wait.
     */
    public static <T> T aside(Supplier<T> wait) {
        RequestAttributes request = RequestContextHolder.getRequestAttributes();
        if (request == null || !(request.getAttribute(SLOT, RequestAttributes.SCOPE_REQUEST) instanceof Slot slot)) {
            return wait.get();
        }
        TenantSlots owner = slot.owner();
        owner.give(slot, false);
        try {
            return wait.get();
        } finally {
            int inFlight = owner.slots.takeBack(slot.tenant());
            request.setAttribute(SLOT, new Slot(owner, slot.tenant(), System.nanoTime(), inFlight),
                    RequestAttributes.SCOPE_REQUEST);
        }
    }
}
