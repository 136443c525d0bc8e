package io.leasekeeper;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * The service. Prometheus exemplars are left out: spans are not exported anywhere an exemplar could
 * link to, and Prometheus 2.42 (Debian's, in PrometheusTest) refuses the whole scrape once a summary
 * carries one: "hikaricp_connections_acquire_seconds_count does not support exemplars".
 */
@SpringBootApplication(excludeName =
        "org.springframework.boot.micrometer.tracing.autoconfigure.prometheus.PrometheusExemplarsAutoConfiguration")
@ConfigurationPropertiesScan
public class LeasekeeperApplication {

    public static void main(String[] args) {
        SpringApplication.run(LeasekeeperApplication.class, args);
    }
}
