package io.leasekeeper.limits;

import io.leasekeeper.config.LeasekeeperProperties;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

@Configuration(proxyBeanMethods = false)
class LimitsConfig {

    /** Static: a post-processor is made before the beans it processes, the DataSource among them. */
    @Bean
    static BeanPostProcessor tenantPoolShare(LeasekeeperProperties properties) {
        return TenantPoolShare.wrapping(properties);
    }
}
