package io.leasekeeper.metrics;

import io.leasekeeper.config.LeasekeeperProperties;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.scheduling.annotation.EnableScheduling;

/** The service's own meters; Spring Boot adds HTTP server, HikariCP and JVM meters beside them. */
@Configuration(proxyBeanMethods = false)
@EnableScheduling // LeaseGauges
class MetricsConfig {

    /** Right after the trace id is set, so that every answer is timed, security's and the body limit's too. */
    @Bean
    FilterRegistrationBean<OperationMetrics> operationMetrics(MeterRegistry registry, LeasekeeperProperties properties) {
        FilterRegistrationBean<OperationMetrics> registration =
                new FilterRegistrationBean<>(new OperationMetrics(registry, properties.metrics()));
        registration.setOrder(Ordered.HIGHEST_PRECEDENCE + 3);
        return registration;
    }
}
