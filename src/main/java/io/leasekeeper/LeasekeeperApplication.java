package io.leasekeeper;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/** The service. */
@SpringBootApplication
@ConfigurationPropertiesScan
public class LeasekeeperApplication {

    public static void main(String[] args) {
        SpringApplication.run(LeasekeeperApplication.class, args);
    }
}
