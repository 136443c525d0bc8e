package io.leasekeeper.config;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.context.properties.bind.Name;
import org.springframework.util.unit.DataSize;

/**
 * Every setting of the service, under {@code leasekeeper.*}, checked once at start-up: a bad value stops
 * the service with a message naming it, instead of surfacing later as odd lease behaviour.
 */
@ConfigurationProperties("leasekeeper")
public record LeasekeeperProperties(
        @DefaultValue Lease lease,
        @DefaultValue ListPage list,
        @DefaultValue Sweeper sweeper,
        @DefaultValue Security security,
        @DefaultValue Idempotency idempotency,
        @DefaultValue Audit audit,
        @DefaultValue Metrics metrics,
        @DefaultValue Limits limits,
        @DefaultValue Requests requests,
        // "wait" names Object.wait(), which no record component may; the properties are leasekeeper.wait.*.
        @Name("wait") @DefaultValue Wait waiting) {

    public LeasekeeperProperties {
        // A lease is kept at least the audit retention after it ended: no idempotency record outlives its lease.
        require(audit.retention().compareTo(idempotency.retention()) >= 0,
                "leasekeeper.audit.retention must be at least leasekeeper.idempotency.retention");
    }

    /**
     * Bounds of a lease's timing. {@code minTtl} stops clients from renewing so often that they load the
     * database; {@code maxTtl} bounds how long a dead holder blocks its key. Every lease lives at most
     * {@code maxLifetimeCap}, so no key is held forever by a client that keeps renewing.
     */
    public record Lease(
            @DefaultValue("1s") Duration minTtl,
            @DefaultValue("3600s") Duration maxTtl,
            @DefaultValue("24h") Duration defaultMaxLifetime,
            @DefaultValue("7d") Duration maxLifetimeCap,
            @DefaultValue("8KB") DataSize metadataMaxSize) {

        public Lease {
            requireWholeSeconds("leasekeeper.lease.min-ttl", minTtl);
            requireWholeSeconds("leasekeeper.lease.max-ttl", maxTtl);
            requireWholeSeconds("leasekeeper.lease.default-max-lifetime", defaultMaxLifetime);
            requireWholeSeconds("leasekeeper.lease.max-lifetime-cap", maxLifetimeCap);
            require(minTtl.toSeconds() >= 1, "leasekeeper.lease.min-ttl must be at least 1s");
            require(maxTtl.compareTo(minTtl) >= 0, "leasekeeper.lease.max-ttl must not be below min-ttl");
            // A lease granted with the largest TTL and the default lifetime must be able to run its first TTL.
            require(defaultMaxLifetime.compareTo(maxTtl) >= 0,
                    "leasekeeper.lease.max-ttl must not exceed leasekeeper.lease.default-max-lifetime");
            require(maxLifetimeCap.compareTo(defaultMaxLifetime) >= 0,
                    "leasekeeper.lease.max-lifetime-cap must be at least leasekeeper.lease.default-max-lifetime");
            // Lifetimes travel as int seconds on the wire and in the database.
            require(maxLifetimeCap.toSeconds() <= Integer.MAX_VALUE, "leasekeeper.lease.max-lifetime-cap is too large");
            require(metadataMaxSize.toBytes() >= 2, "leasekeeper.lease.metadata-max-size must hold at least {}");
        }
    }

    /**
     * Page sizes of list and history: a page is one query and one answer held in memory, so the maximum
     * bounds both (issue 17).
     */
    public record ListPage(@DefaultValue("100") int defaultLimit, @DefaultValue("1000") int maxLimit) {

        public ListPage {
            require(maxLimit >= 1, "leasekeeper.list.max-limit must be at least 1");
            require(defaultLimit >= 1 && defaultLimit <= maxLimit,
                    "leasekeeper.list.default-limit must be within 1..max-limit");
        }
    }

    /**
     * The expiry sweeper. It only tidies up (correctness never waits for it), so the interval bounds how
     * long an expired lease stays 'active' in the table, and the batch size bounds one transaction.
     */
    public record Sweeper(
            @DefaultValue("true") boolean enabled,
            @DefaultValue("1s") Duration interval,
            @DefaultValue("500") int batchSize,
            @DefaultValue("4") int workers) {

        public Sweeper {
            require(!interval.isNegative() && !interval.isZero(), "leasekeeper.sweeper.interval must be positive");
            require(batchSize >= 1 && batchSize <= 10_000, "leasekeeper.sweeper.batch-size must be within 1..10000");
            require(workers >= 1 && workers <= 16, "leasekeeper.sweeper.workers must be within 1..16");
        }
    }

    /**
     * Idempotent retries. {@code retention} is how long a retry with the same Idempotency-Key replays the
     * first answer instead of executing again; it must outlast any client's retry schedule.
     */
    public record Idempotency(
            @DefaultValue("24h") Duration retention,
            @DefaultValue("1m") Duration cleanupInterval,
            @DefaultValue("true") boolean cleanupEnabled) {

        public Idempotency {
            requireWholeSeconds("leasekeeper.idempotency.retention", retention);
            require(retention.toSeconds() >= 1, "leasekeeper.idempotency.retention must be at least 1s");
            require(!cleanupInterval.isNegative() && !cleanupInterval.isZero(),
                    "leasekeeper.idempotency.cleanup-interval must be positive");
        }
    }

    /**
     * How long a lease and its audit events are kept after it ended ({@code retention}), and how often the job
     * that retires them and makes the event partitions ahead runs ({@code cleanupInterval}; it makes partitions
     * even with {@code cleanupEnabled} false). The events of the leases acquired within one {@code partitionWidth}
     * share a partition, retired whole; {@code partitionsAhead} partitions are made ahead of the clock, so that
     * the job may fail for a while before an acquire finds no partition for its event.
     */
    public record Audit(
            @DefaultValue("90d") Duration retention,
            @DefaultValue("1h") Duration cleanupInterval,
            @DefaultValue("true") boolean cleanupEnabled,
            @DefaultValue("1d") Duration partitionWidth,
            @DefaultValue("7") int partitionsAhead) {

        public Audit {
            requireWholeSeconds("leasekeeper.audit.retention", retention);
            require(!cleanupInterval.isNegative() && !cleanupInterval.isZero(),
                    "leasekeeper.audit.cleanup-interval must be positive");
            requireWholeSeconds("leasekeeper.audit.partition-width", partitionWidth);
            require(partitionWidth.toSeconds() >= 1, "leasekeeper.audit.partition-width must be at least 1s");
            require(partitionsAhead >= 2 && partitionsAhead <= 1000,
                    "leasekeeper.audit.partitions-ahead must be within 2..1000");
            require(cleanupInterval.multipliedBy(2).compareTo(partitionWidth.multipliedBy(partitionsAhead)) <= 0,
                    "leasekeeper.audit.cleanup-interval must be at most half of partition-width times partitions-ahead");
        }
    }

    /**
     * The service's own meters. {@code gaugeRefresh} is how often the lease gauges are read from the
     * database (a scrape never queries it). {@code tenantTag} adds a {@code tenant} tag to the operation
     * timers, for at most {@code maxTenants} distinct tenants; later tenants share the value {@code other},
     * so a tenant-per-customer deployment cannot grow the series without bound.
     */
    public record Metrics(
            @DefaultValue("10s") Duration gaugeRefresh,
            @DefaultValue("false") boolean tenantTag,
            @DefaultValue("100") int maxTenants) {

        public Metrics {
            require(!gaugeRefresh.isNegative() && !gaugeRefresh.isZero(),
                    "leasekeeper.metrics.gauge-refresh must be positive");
            require(maxTenants >= 1 && maxTenants <= 10_000, "leasekeeper.metrics.max-tenants must be within 1..10000");
        }
    }

    /**
     * Waiting requests: a waiting acquire and a watch (contract 1.1). {@code max} bounds their
     * {@code waitSeconds}; 30 s answers well before the idle timeouts of common proxies and load balancers
     * (60 s), which would otherwise cut a waiting request. {@code maxWaiters} bounds the requests one
     * instance keeps waiting at once; beyond it a waiting request is answered as a non-waiting one.
     * {@code fallbackPoll}: how often a waiter tries again while the listener for freed keys is down (its
     * notifications may be lost then). {@code notifications} off stops sending them, so that waiters rely
     * on their timers and the fallback poll alone: a switch for measuring what notifications cost.
     * {@code listenUrl}: the JDBC URL of the listener's own connection, when it must bypass a proxy that
     * pools transactions (LISTEN needs a session); unset, the datasource's URL.
     */
    public record Wait(
            @DefaultValue("30s") Duration max,
            @DefaultValue("1000") int maxWaiters,
            @DefaultValue("1s") Duration fallbackPoll,
            @DefaultValue("true") boolean notifications,
            String listenUrl) {

        public Wait {
            listenUrl = listenUrl == null || listenUrl.isBlank() ? null : listenUrl;
            requireWholeSeconds("leasekeeper.wait.max", max);
            require(max.toSeconds() <= 300, "leasekeeper.wait.max must be at most 300s");
            require(maxWaiters >= 0 && maxWaiters <= 100_000, "leasekeeper.wait.max-waiters must be within 0..100000");
            require(!fallbackPoll.isNegative() && !fallbackPoll.isZero(), "leasekeeper.wait.fallback-poll must be positive");
        }
    }

    /**
     * Tokens. {@code tenantClaim}: the JWT claim that names the caller's tenant. {@code audienceCheck}: whether
     * tokens must name this service in {@code aud}. On (the default), a token must name one of
     * {@code spring.security.oauth2.resourceserver.jwt.audiences} when they are set; off, no audience may be
     * set and the service warns at start that tokens of any audience are accepted, so that accepting tokens
     * meant for other APIs is always a choice someone wrote down (docs/guides/deployment.md).
     */
    public record Security(@DefaultValue("tenant") String tenantClaim, @DefaultValue("true") boolean audienceCheck) {

        public Security {
            require(tenantClaim != null && !tenantClaim.isBlank(), "leasekeeper.security.tenant-claim must be set");
        }
    }

    /**
     * What one tenant may take (contract 1.1, "Tenant limits", and 1.2, "Load a client caused is never a 5xx"), each
     * default with its reason in docs/guides/operations.md. {@code maxActiveLeasesPerTenant} caps the tenant's active leases,
     * counted from the database at most every {@code quotaRefresh} on each instance (plus the grants this instance
     * made since), so that no acquire contends on a shared counter row. {@code requestsPerSecondPerTenant} (0, the
     * default: no limit) refills a per-tenant bucket of {@code requestBurstPerTenant} requests on each instance (0,
     * the default: one second of the rate). {@code requestsInProgress} is how many requests an instance works on at
     * once, shared fairly among the tenants asking (0, the default: adapted to the time requests take, between the
     * processors' count and the connection pool's size);
     * {@code queuePerTenant} bounds the requests of one tenant waiting for a slot, and {@code queueTimeout} how long
     * one waits, before it answers 429 TENANT_BUSY.
     */
    public record Limits(
            @DefaultValue("10000") int maxActiveLeasesPerTenant,
            @DefaultValue("1s") Duration quotaRefresh,
            @DefaultValue("0") int requestsPerSecondPerTenant,
            @DefaultValue("0") int requestBurstPerTenant,
            @DefaultValue("0") int requestsInProgress,
            @DefaultValue("256") int queuePerTenant,
            @DefaultValue("2s") Duration queueTimeout) {

        public Limits {
            require(maxActiveLeasesPerTenant >= 1, "leasekeeper.limits.max-active-leases-per-tenant must be at least 1");
            require(!quotaRefresh.isNegative() && !quotaRefresh.isZero() && quotaRefresh.toSeconds() <= 60,
                    "leasekeeper.limits.quota-refresh must be within (0, 60s]");
            require(requestsPerSecondPerTenant >= 0, "leasekeeper.limits.requests-per-second-per-tenant must not be negative");
            require(requestBurstPerTenant >= 0, "leasekeeper.limits.request-burst-per-tenant must not be negative");
            require(requestBurstPerTenant == 0 || requestBurstPerTenant >= requestsPerSecondPerTenant,
                    "leasekeeper.limits.request-burst-per-tenant must be at least requests-per-second-per-tenant");
            require(requestsInProgress >= 0, "leasekeeper.limits.requests-in-progress must not be negative");
            require(queuePerTenant >= 0, "leasekeeper.limits.queue-per-tenant must not be negative");
            require(!queueTimeout.isNegative(), "leasekeeper.limits.queue-timeout must not be negative");
        }

        /** The bucket's size: as set, or (0) one second of the rate. */
        public int burst() {
            return requestBurstPerTenant > 0 ? requestBurstPerTenant : requestsPerSecondPerTenant;
        }
    }

    /**
     * What a request may cost before its answer (docs/guides/security.md, "Request bodies and slow senders").
     * {@code bodyTimeout}: how long in all the service waits for the bytes of one body, while its handler reads it
     * (then 408) and again for what its answer left unread (then the connection is closed); the time its reads block,
     * never the time the service spends itself.
     */
    public record Requests(@DefaultValue("10s") Duration bodyTimeout) {

        public Requests {
            require(bodyTimeout != null && !bodyTimeout.isNegative() && !bodyTimeout.isZero(),
                    "leasekeeper.requests.body-timeout must be positive");
        }
    }

    private static void requireWholeSeconds(String name, Duration value) {
        require(value != null && value.toNanosPart() == 0 && !value.isNegative(),
                name + " must be a whole, non-negative number of seconds");
    }

    private static void require(boolean condition, String message) {
        if (!condition) {
            throw new IllegalArgumentException(message);
        }
    }
}
