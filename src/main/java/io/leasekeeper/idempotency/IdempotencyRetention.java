package io.leasekeeper.idempotency;

import io.leasekeeper.config.Housekeeping;
import io.leasekeeper.config.LeasekeeperProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.config.ScheduledTaskRegistrar;

/** Deletes idempotency records past their retention, in bounded batches, every cleanup interval. */
@Configuration(proxyBeanMethods = false)
@EnableScheduling
@ConditionalOnBooleanProperty(name = "leasekeeper.idempotency.cleanup-enabled", matchIfMissing = true)
class IdempotencyRetention implements SchedulingConfigurer {

    private static final Logger log = LoggerFactory.getLogger(IdempotencyRetention.class);
    private static final int BATCH = 1000;
    private static final int MAX_BATCHES = 100;

    private final IdempotencyStore store;
    private final LeasekeeperProperties properties;

    IdempotencyRetention(IdempotencyStore store, LeasekeeperProperties properties) {
        this.store = store;
        this.properties = properties;
    }

    @Override
    public void configureTasks(ScheduledTaskRegistrar registrar) {
        registrar.addFixedDelayTask(Housekeeping.keepSchedule("Idempotency retention", log,
                () -> Housekeeping.drain(BATCH, MAX_BATCHES, () -> store.deleteExpired(BATCH))),
                properties.idempotency().cleanupInterval());
    }
}
