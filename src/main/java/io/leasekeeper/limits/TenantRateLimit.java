package io.leasekeeper.limits;

import io.leasekeeper.web.FilterOrder;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.ConsumptionProbe;
import io.leasekeeper.config.LeasekeeperProperties;
import io.leasekeeper.security.TenantAttribute;
import io.leasekeeper.web.ApiException;
import io.leasekeeper.web.ErrorCode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The per-tenant request rate of this instance, when one is set (none by default: the slots share the instance
 * fairly without it): a Bucket4j token bucket per tenant ({@code burst} requests, one second of the rate unless
 * set, refilled at {@code requestsPerSecondPerTenant}), taken from before the handler runs, so a refused
 * request reaches no database. A refusal is 429 RATE_LIMITED with {@code Retry-After} (the bucket's wait for its
 * next token, rounded up). The buckets of tenants idle for a minute are forgotten: they would be full anyway.
 */
@Configuration(proxyBeanMethods = false)
class TenantRateLimit implements HandlerInterceptor, WebMvcConfigurer {

    private final int perSecond;
    private final int burst;
    private final Cache<String, Bucket> buckets =
            Caffeine.newBuilder().expireAfterAccess(Duration.ofMinutes(1)).maximumSize(100_000).build();
    private final Counter refused;

    TenantRateLimit(LeasekeeperProperties properties, MeterRegistry registry) {
        this.perSecond = properties.limits().requestsPerSecondPerTenant();
        this.burst = properties.limits().burst();
        this.refused = TenantLimits.refusals(registry, "rate");
    }

    @Override
    public void addInterceptors(InterceptorRegistry registry) {
        if (perSecond > 0) {
            registry.addInterceptor(this).addPathPatterns("/v1/**").order(FilterOrder.TENANT_RATE_LIMIT);
        }
    }

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
        if (!(request.getAttribute(TenantAttribute.NAME) instanceof String tenant)) {
            return true; // not authenticated: security has answered, or will
        }
        ConsumptionProbe probe = buckets.get(tenant, t -> Bucket.builder()
                .addLimit(Bandwidth.builder().capacity(burst).refillGreedy(perSecond, Duration.ofSeconds(1)).build())
                .build()).tryConsumeAndReturnRemaining(1);
        if (!probe.isConsumed()) {
            refused.increment();
            long seconds = Math.max(1, TimeUnit.NANOSECONDS.toSeconds(probe.getNanosToWaitForRefill() + 999_999_999L));
            throw new ApiException(ErrorCode.RATE_LIMITED, "The tenant sent more than " + perSecond
                    + " requests a second to this instance; retry after " + seconds + " s.", seconds);
        }
        return true;
    }
}
