package io.leasekeeper.client.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The client's counters, where the application has Micrometer and a MeterRegistry bean. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
@ConditionalOnBean(type = "io.micrometer.core.instrument.MeterRegistry")
class MetricsConfiguration {

    @Bean
    @ConditionalOnMissingBean
    LeasekeeperClientMetrics leasekeeperClientMetrics(MeterRegistry registry) {
        return new LeasekeeperClientMetrics(registry);
    }
}
