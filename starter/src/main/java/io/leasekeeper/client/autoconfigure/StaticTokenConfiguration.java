package io.leasekeeper.client.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** {@code leasekeeper.client.token}, or no token, when no other {@link LeasekeeperTokenSupplier} was made. */
@Configuration(proxyBeanMethods = false)
class StaticTokenConfiguration {

    @Bean
    @ConditionalOnMissingBean
    LeasekeeperTokenSupplier leasekeeperTokenSupplier(LeasekeeperClientProperties properties) {
        String registrationId = properties.oauth2().registrationId();
        if (registrationId != null) {
            // Reached only when OAuth2TokenConfiguration's class condition failed: sending no token would fail
            // every call with 401, long after start-up.
            throw new IllegalStateException("leasekeeper.client.oauth2.registration-id is '" + registrationId
                    + "' but Spring Security's OAuth2 client is not on the classpath: add"
                    + " org.springframework.boot:spring-boot-starter-security-oauth2-client");
        }
        return LeasekeeperTokenSupplier.of(properties.token());
    }
}
