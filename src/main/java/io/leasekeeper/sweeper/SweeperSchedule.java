package io.leasekeeper.sweeper;

import io.leasekeeper.config.Housekeeping;
import io.leasekeeper.config.LeasekeeperProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.config.ScheduledTaskRegistrar;

/** Runs the sweeper every {@code leasekeeper.sweeper.interval} (after the previous run ends), unless disabled. */
@Configuration(proxyBeanMethods = false)
@EnableScheduling
@ConditionalOnBooleanProperty(name = "leasekeeper.sweeper.enabled", matchIfMissing = true)
class SweeperSchedule implements SchedulingConfigurer {

    private static final Logger log = LoggerFactory.getLogger(SweeperSchedule.class);

    private final LeaseSweeper sweeper;
    private final LeasekeeperProperties properties;

    SweeperSchedule(LeaseSweeper sweeper, LeasekeeperProperties properties) {
        this.sweeper = sweeper;
        this.properties = properties;
    }

    @Override
    public void configureTasks(ScheduledTaskRegistrar registrar) {
        registrar.addFixedDelayTask(Housekeeping.keepSchedule("Sweeper", log, () -> {
            sweeper.sweepDue();
            sweeper.deleteAbandonedWaiters();
        }), properties.sweeper().interval());
    }
}
