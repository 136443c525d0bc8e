package io.leasekeeper.sweeper;

import io.leasekeeper.config.Housekeeping;
import io.leasekeeper.config.LeasekeeperProperties;
import io.leasekeeper.lease.Expirations;
import io.leasekeeper.lease.LeaseOperations;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
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
    private final int workers;
    private final Counter expired;
    private final Timer batches;

    LeaseSweeper(LeaseOperations operations, LeasekeeperProperties properties, MeterRegistry registry) {
        this.operations = operations;
        this.batchSize = properties.sweeper().batchSize();
        this.workers = properties.sweeper().workers();
        this.expired = Expirations.counter(registry, "sweeper");
        this.batches = Timer.builder("leasekeeper.sweeper.batch").description("One sweeper batch, one transaction")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofSeconds(10)).register(registry);
        // The lag alert compares the lag with a few intervals, whatever the interval is set to.
        double intervalSeconds = properties.sweeper().interval().toMillis() / 1000.0;
        Gauge.builder("leasekeeper.sweeper.interval", () -> intervalSeconds).baseUnit("seconds")
                .description("The sweeper's configured interval (leasekeeper.sweeper.interval)").register(registry);
    }

    /** One batch, one transaction: returns how many leases it expired (counted once it has committed). */
    public int sweepOnce() {
        long start = System.nanoTime();
        int count = operations.expireDue(batchSize);
        batches.record(Duration.ofNanos(System.nanoTime() - start));
        expired.increment(count);
        return count;
    }

    /**
     * Batches until one comes back short (nothing more is due) or the run's bound is reached. When the
     * first batch is full there is a backlog (a mass expiry), and {@code workers} sweep it at once, each
     * batch on keys none of the others holds; the run's bound is shared among them.
     */
    public int sweepDue() {
        int total = sweepOnce();
        if (total == batchSize) {
            total += drainTogether();
        }
        if (total > 0) {
            log.debug("Sweeper expired {} leases", total);
        }
        return total;
    }

    /**
     * Deletes the queue rows of waiting acquires that never answered (their instance stopped), a minute after
     * their wait ran out; returns how many.
     */
    public int deleteAbandonedWaiters() {
        return Housekeeping.drain(batchSize, MAX_BATCHES_PER_RUN, () -> operations.deleteAbandonedWaiters(batchSize));
    }

    private int drainTogether() {
        int batchesEach = Math.max(1, (MAX_BATCHES_PER_RUN - 1) / workers);
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Integer>> swept = new ArrayList<>();
            for (int i = 0; i < workers; i++) {
                swept.add(pool.submit(() -> Housekeeping.drain(batchSize, batchesEach, this::sweepOnce)));
            }
            int total = 0;
            for (Future<Integer> worker : swept) {
                total += worker.get();
            }
            return total;
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException failure ? failure : new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("sweeper interrupted", e);
        }
    }
}
