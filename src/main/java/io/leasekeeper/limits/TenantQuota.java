package io.leasekeeper.limits;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.leasekeeper.config.LeasekeeperProperties;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

/**
 * The quota of active leases per tenant. Each instance counts a tenant's active leases in the database at most
 * once per {@code quotaRefresh} and adds the grants it made itself since: no acquire contends on a shared
 * counter row, and the count lags at most by the other instances' grants of the last refresh (documented in
 * docs/concepts/limits.md). An acquire reserves its place before its call, which is told whether it may grant: one
 * that may not is refused a free key, and grants nothing. A key handed over to a waiting acquire is not checked: the
 * lease that ended to free it was the same tenant's.
 */
@Component
public class TenantQuota {

    /** The tenant's leases active by the database's clock; served by the partial index lease_list_active. */
    private static final String ACTIVE_LEASES = """
            SELECT count(*) FROM lease
            WHERE tenant = :tenant AND state = 'active' AND expires_at > lease_now()
            """;

    /** A count from the database, and the grants this instance made since it was taken. */
    private record Count(long counted, AtomicLong grantedSince) {
    }

    private final JdbcClient jdbc;
    private final int max;
    private final Cache<String, Count> counts;
    private final Counter refused;

    TenantQuota(JdbcClient jdbc, LeasekeeperProperties properties, MeterRegistry registry) {
        this.jdbc = jdbc;
        this.max = properties.limits().maxActiveLeasesPerTenant();
        this.counts = Caffeine.newBuilder().expireAfterWrite(properties.limits().quotaRefresh())
                .maximumSize(100_000).build();
        this.refused = TenantLimits.refusals(registry, "quota");
    }

    /**
     * Before an acquire's call: counts the grant to come, or answers false (counting nothing) when it would take the
     * tenant over its quota; the call then refuses the key if it finds it free ({@link #refuse}), and answers a busy
     * key as busy. An acquire that did not grant gives its place back with {@link #unreserve}.
     */
    public boolean reserve(String tenant) {
        Count count = counts.get(tenant, t -> new Count(activeLeases(t), new AtomicLong()));
        if (count.counted() + count.grantedSince().incrementAndGet() > max) {
            count.grantedSince().decrementAndGet();
            return false;
        }
        return true;
    }

    /** A place {@link #reserve}d for a grant that was not made. */
    public void unreserve(String tenant) {
        Count count = counts.getIfPresent(tenant);
        if (count != null) {
            count.grantedSince().decrementAndGet();
        }
    }

    /**
     * An acquire found its key free while {@link #reserve} had answered false, and was refused it, nothing granted
     * (429 QUOTA_EXCEEDED): counted, and the problem's detail.
     */
    public String refuse() {
        refused.increment();
        return "The tenant has " + max + " active leases, the most it may hold; release one first.";
    }

    private long activeLeases(String tenant) {
        return jdbc.sql(ACTIVE_LEASES).param("tenant", tenant).query(Long.class).single();
    }
}
