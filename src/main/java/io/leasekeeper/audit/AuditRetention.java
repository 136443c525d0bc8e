package io.leasekeeper.audit;

import io.leasekeeper.config.Housekeeping;
import io.leasekeeper.config.LeasekeeperProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.config.ScheduledTaskRegistrar;

/** Deletes audit events past {@code leasekeeper.audit.retention}, in batches, every cleanup interval. */
@Configuration(proxyBeanMethods = false)
@EnableScheduling
@ConditionalOnBooleanProperty(name = "leasekeeper.audit.cleanup-enabled", matchIfMissing = true)
class AuditRetention implements SchedulingConfigurer {

    private static final Logger log = LoggerFactory.getLogger(AuditRetention.class);
    private static final int BATCH = 1000;
    private static final int MAX_BATCHES = 100;

    private final AuditLog audit;
    private final LeasekeeperProperties.Audit settings;

    AuditRetention(AuditLog audit, LeasekeeperProperties properties) {
        this.audit = audit;
        this.settings = properties.audit();
    }

    @Override
    public void configureTasks(ScheduledTaskRegistrar registrar) {
        registrar.addFixedDelayTask(Housekeeping.keepSchedule("Audit retention", log,
                () -> Housekeeping.drain(BATCH, MAX_BATCHES, () -> audit.deleteOlderThan(settings.retention(), BATCH))),
                settings.cleanupInterval());
    }
}
