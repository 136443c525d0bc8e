package io.leasekeeper.retention;

import io.leasekeeper.config.Housekeeping;
import io.leasekeeper.config.LeasekeeperProperties;
import org.springframework.stereotype.Component;

/**
 * The audit's retention, run every {@code leasekeeper.audit.cleanup-interval} (jobs.PeriodicJobs): makes the
 * event partitions ahead, and unless
 * {@code leasekeeper.audit.cleanup-enabled} is false, deletes the leases and keys past their retention and then
 * drops the partitions past it. Leases go in batches until none is left, so the job keeps up with any rate of
 * leases; events go a partition at a time.
 */
@Component
public class AuditRetention {

    private static final int BATCH = 1000;
    private static final int MAX_BATCHES = 10_000;

    private final EventPartitions partitions;
    private final EndedLeases leases;
    private final LeasekeeperProperties.Audit settings;

    AuditRetention(EventPartitions partitions, EndedLeases leases, LeasekeeperProperties properties) {
        this.partitions = partitions;
        this.leases = leases;
        this.settings = properties.audit();
    }

    public void run() {
        partitions.makeAhead();
        if (settings.cleanupEnabled()) {
            Housekeeping.drain(BATCH, MAX_BATCHES, () -> leases.deleteBatch(partitions.kept(), BATCH));
            partitions.retire();
        }
    }
}
