package io.leasekeeper.config;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

/** Bad settings stop the service at start-up with a message naming the setting. */
class LeasekeeperPropertiesTest {

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(LeasekeeperProperties.class)
    static class PropertiesOnly {
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of())
            .withUserConfiguration(PropertiesOnly.class);

    @Test
    void defaultsMatchTheContract() {
        runner.run(context -> {
            LeasekeeperProperties p = context.getBean(LeasekeeperProperties.class);
            assertThat(p.lease().minTtl().toSeconds()).isEqualTo(1);
            assertThat(p.lease().maxTtl().toSeconds()).isEqualTo(3600);
            assertThat(p.lease().defaultMaxLifetime().toHours()).isEqualTo(24);
            assertThat(p.lease().maxLifetimeCap().toDays()).isEqualTo(7);
            assertThat(p.lease().metadataMaxSize().toBytes()).isEqualTo(8192);
            assertThat(p.list().defaultLimit()).isEqualTo(100);
            assertThat(p.list().maxLimit()).isEqualTo(1000);
            assertThat(p.sweeper().interval().toMillis()).isEqualTo(1000);
            assertThat(p.sweeper().batchSize()).isEqualTo(500);
            assertThat(p.sweeper().workers()).isEqualTo(4);
            assertThat(p.security().tenantClaim()).isEqualTo("tenant");
            assertThat(p.metrics().gaugeRefresh().toSeconds()).isEqualTo(10);
            assertThat(p.metrics().tenantTag()).isFalse();
            assertThat(p.metrics().maxTenants()).isEqualTo(100);
            // Contract 1.1: leasekeeper.wait.max defaults to 30 s.
            assertThat(p.waiting().max().toSeconds()).isEqualTo(30);
            assertThat(p.waiting().maxWaiters()).isEqualTo(1000);
            assertThat(p.waiting().fallbackPoll().toMillis()).isEqualTo(1000);
            assertThat(p.waiting().notifications()).isTrue();
            assertThat(p.waiting().listenUrl()).isNull();
            // Contract 1.1: leasekeeper.limits.max-active-leases-per-tenant defaults to 10000.
            assertThat(p.limits().maxActiveLeasesPerTenant()).isEqualTo(10_000);
            assertThat(p.limits().quotaRefresh().toMillis()).isEqualTo(1000);
            // Contract 1.2: no per-tenant bound applies to a tenant alone; the slots are shared fairly.
            assertThat(p.limits().requestsPerSecondPerTenant()).isZero();
            assertThat(p.limits().requestsInProgress()).isZero();
            assertThat(p.limits().queuePerTenant()).isEqualTo(256);
            assertThat(p.limits().queueTimeout().toSeconds()).isEqualTo(2);
            assertThat(p.requests().bodyTimeout().toSeconds()).isEqualTo(10);
        });
    }

    @Test
    void aRateSetAloneBringsABurstOfOneSecondOfIt() {
        runner.withPropertyValues("leasekeeper.limits.requests-per-second-per-tenant=20").run(context ->
                assertThat(context.getBean(LeasekeeperProperties.class).limits().burst()).isEqualTo(20));
        runner.withPropertyValues("leasekeeper.limits.requests-per-second-per-tenant=20",
                "leasekeeper.limits.request-burst-per-tenant=50").run(context ->
                assertThat(context.getBean(LeasekeeperProperties.class).limits().burst()).isEqualTo(50));
        runner.withPropertyValues("leasekeeper.limits.requests-per-second-per-tenant=20",
                "leasekeeper.limits.request-burst-per-tenant=10").run(context -> assertThat(context).hasFailed());
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "leasekeeper.lease.min-ttl=0s",
            "leasekeeper.lease.min-ttl=1500ms",
            "leasekeeper.lease.max-ttl=25h",
            "leasekeeper.lease.max-lifetime-cap=1h",
            "leasekeeper.list.default-limit=2000",
            "leasekeeper.sweeper.interval=0s",
            "leasekeeper.sweeper.batch-size=0",
            "leasekeeper.sweeper.workers=0",
            "leasekeeper.sweeper.workers=17",
            "leasekeeper.security.tenant-claim= ",
            "leasekeeper.audit.retention=12h",
            "leasekeeper.audit.partition-width=1500ms",
            "leasekeeper.audit.partition-width=0s",
            "leasekeeper.audit.partitions-ahead=1",
            "leasekeeper.audit.cleanup-interval=4d",
            "leasekeeper.idempotency.retention=0s",
            "leasekeeper.metrics.gauge-refresh=0s",
            "leasekeeper.metrics.max-tenants=0",
            "leasekeeper.wait.max=301s",
            "leasekeeper.wait.max=1500ms",
            "leasekeeper.wait.max-waiters=-1",
            "leasekeeper.wait.fallback-poll=0s",
            "leasekeeper.limits.max-active-leases-per-tenant=0",
            "leasekeeper.limits.quota-refresh=0s",
            "leasekeeper.limits.requests-per-second-per-tenant=-1",
            "leasekeeper.limits.request-burst-per-tenant=-1",
            "leasekeeper.limits.requests-in-progress=-1",
            "leasekeeper.limits.queue-per-tenant=-1",
            "leasekeeper.limits.queue-timeout=-1s",
            "leasekeeper.requests.body-timeout=0s"})
    void invalidSettingsFailStartUpNamingTheSetting(String setting) {
        runner.withPropertyValues(setting).run(context -> {
            assertThat(context).hasFailed();
            String name = setting.substring(0, setting.indexOf('='));
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining(name);
        });
    }
}
