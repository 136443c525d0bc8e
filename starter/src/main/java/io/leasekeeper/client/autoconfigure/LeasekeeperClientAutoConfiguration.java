package io.leasekeeper.client.autoconfigure;

import io.leasekeeper.client.HoldOptions;
import io.leasekeeper.client.LeaseListener;
import io.leasekeeper.client.LeasekeeperClient;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * A {@link LeasekeeperClient} and the {@link HoldOptions} of {@code leasekeeper.client.*}; an application's own
 * bean of either type wins. The client's bearer token is the {@link LeasekeeperTokenSupplier} bean (imported in
 * order: OAuth2 client credentials first, then the static token or none), and it tells every
 * {@link LeaseListener} bean, in their order: the starter's Micrometer counters when a MeterRegistry exists,
 * and the application's own listeners beside them.
 *
 * <p>After Boot's OAuth2 client (the ClientRegistrationRepository) and metrics (the MeterRegistry), named by
 * string since both are optional.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.security.oauth2.client.autoconfigure.OAuth2ClientAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"})
@EnableConfigurationProperties(LeasekeeperClientProperties.class)
@Import({OAuth2TokenConfiguration.class, StaticTokenConfiguration.class, MetricsConfiguration.class})
public final class LeasekeeperClientAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    HoldOptions leasekeeperHoldOptions(LeasekeeperClientProperties properties) {
        return properties.holdOptions();
    }

    @Bean
    @ConditionalOnMissingBean
    LeasekeeperClient leasekeeperClient(LeasekeeperClientProperties properties, LeasekeeperTokenSupplier token,
                                        ObjectProvider<LeaseListener> listeners) {
        LeasekeeperClientProperties.Retries retries = properties.retries();
        return LeasekeeperClient.builder(properties.baseUrl())
                .allowPlainHttp(properties.allowPlainHttp())
                .token(token)
                .connectTimeout(properties.connectTimeout())
                .requestTimeout(properties.requestTimeout())
                .retries(retries.maxAttempts(), retries.firstBackoff(), retries.maxBackoff())
                .listener(LeaseListeners.all(listeners.orderedStream().toList()))
                .build();
    }
}
