package io.leasekeeper.retention;

import io.leasekeeper.config.Housekeeping;
import io.leasekeeper.config.LeasekeeperProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.config.ScheduledTaskRegistrar;

/**
 * Every {@code leasekeeper.audit.cleanup-interval}: makes the event partitions ahead, and unless
 * {@code leasekeeper.audit.cleanup-enabled} is false, deletes the leases and keys past their retention and then
 * drops the partitions past it. Leases go in batches until none is left, so the job keeps up with any rate of
 * leases; events go a partition at a time.
 */
@Configuration(proxyBeanMethods = false)
@EnableScheduling
class RetentionSchedule implements SchedulingConfigurer {

    private static final Logger log = LoggerFactory.getLogger(RetentionSchedule.class);
    private static final int BATCH = 1000;
    private static final int MAX_BATCHES = 10_000;

    private final EventPartitions partitions;
    private final EndedLeases leases;
    private final LeasekeeperProperties.Audit settings;

    RetentionSchedule(EventPartitions partitions, EndedLeases leases, LeasekeeperProperties properties) {
        this.partitions = partitions;
        this.leases = leases;
        this.settings = properties.audit();
    }

    @Override
    public void configureTasks(ScheduledTaskRegistrar registrar) {
        registrar.addFixedDelayTask(Housekeeping.keepSchedule("Retention", log, this::run), settings.cleanupInterval());
    }

    void run() {
        partitions.makeAhead();
        if (settings.cleanupEnabled()) {
            Housekeeping.drain(BATCH, MAX_BATCHES, () -> leases.deleteBatch(partitions.kept(), BATCH));
            partitions.retire();
        }
    }
}
