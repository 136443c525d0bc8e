package io.leasekeeper.metrics;

import io.leasekeeper.web.FilterOrder;
import io.leasekeeper.config.LeasekeeperProperties;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The service's own meters; Spring Boot adds HTTP server, HikariCP and JVM meters beside them. */
@Configuration(proxyBeanMethods = false)
class MetricsConfig {

    /** In the filters' order of {@link FilterOrder}. */
    @Bean
    FilterRegistrationBean<OperationMetrics> operationMetrics(MeterRegistry registry, LeasekeeperProperties properties) {
        FilterRegistrationBean<OperationMetrics> registration =
                new FilterRegistrationBean<>(new OperationMetrics(registry, properties.metrics()));
        registration.setOrder(FilterOrder.OPERATION_METRICS);
        return registration;
    }
}
