package io.leasekeeper.sweeper;

import io.leasekeeper.config.Housekeeping;
import io.leasekeeper.config.LeasekeeperProperties;
import io.leasekeeper.lease.LeaseOperations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * Records the expiry of leases whose TTL has passed. Only housekeeping: every operation already reads
 * an active lease past its expiry as expired, so a slow or stopped sweeper changes what the table says,
 * never what a client is told. Several instances may sweep at once: each batch locks the keys it takes
 * and skips keys someone else holds, so no lease is expired twice.
 */
@Component
public class LeaseSweeper {

    private static final Logger log = LoggerFactory.getLogger(LeaseSweeper.class);
    /** Bounds one run, so a huge backlog is worked off over several runs instead of one endless loop. */
    static final int MAX_BATCHES_PER_RUN = 100;

    private final LeaseOperations operations;
    private final int batchSize;

    LeaseSweeper(LeaseOperations operations, LeasekeeperProperties properties) {
        this.operations = operations;
        this.batchSize = properties.sweeper().batchSize();
    }

    /** One batch, one transaction: returns how many leases it expired. */
    public int sweepOnce() {
        return operations.expireDue(batchSize);
    }

    /** Batches until one comes back short (nothing more is due) or the run's bound is reached. */
    public int sweepDue() {
        int total = Housekeeping.drain(batchSize, MAX_BATCHES_PER_RUN, this::sweepOnce);
        if (total > 0) {
            log.debug("Sweeper expired {} leases", total);
        }
        return total;
    }
}
