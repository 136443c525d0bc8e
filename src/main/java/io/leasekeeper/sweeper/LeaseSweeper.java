package io.leasekeeper.sweeper;

import io.leasekeeper.config.Housekeeping;
import io.leasekeeper.config.LeasekeeperProperties;
import io.leasekeeper.lease.Expirations;
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
 * and skips keys someone else holds, so no lease is expired twice. It works one tenant at a time.
 */
@Component
public class LeaseSweeper {

    private static final Logger log = LoggerFactory.getLogger(LeaseSweeper.class);
    /** Bounds one run, so a huge backlog is worked off over several runs instead of one endless loop. */
    static final int MAX_BATCHES_PER_RUN = 100;
    /** The due tenants read at once. */
    private static final int TENANTS_PER_READ = 100;

    private final SweeperStore store;
    private final int batchSize;
    private final int workers;
    private final Counter expired;
    private final Timer batches;
    /** The tenant after which the next run starts (null: from the first). */
    private volatile String resumeAfter;

    LeaseSweeper(SweeperStore store, LeasekeeperProperties properties, MeterRegistry registry) {
        this.store = store;
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

    /**
     * One batch of one tenant, one call (lease_expire_due): returns how many leases it expired (counted once it
     * has committed).
     */
    public int sweepOnce(String tenant) {
        long start = System.nanoTime();
        int count = store.expireDue(tenant, batchSize);
        batches.record(Duration.ofNanos(System.nanoTime() - start));
        expired.increment(count);
        return count;
    }

    /**
     * Every tenant with due leases, one tenant at a time (each batch one tenant's transaction: one partition or
     * node of a schema sharded by tenant, docs/guides/scale-out.md), until the run's bound of batches is spent. A run
     * starts after the tenant where the previous one stopped, then comes round to the first: a backlog of some
     * tenants never starves the others. A tenant whose first batch is full has a backlog (a mass expiry), and
     * {@code workers} sweep it at once, each batch on keys none of the others holds.
     */
    public int sweepDue() {
        String start = resumeAfter;
        Run run = new Run();
        sweepTenantsAfter(start, run);
        if (start != null && run.batchesLeft > 0) {
            sweepTenantsAfter(null, run);
        }
        if (run.expired > 0) {
            log.debug("Sweeper expired {} leases", run.expired);
        }
        return run.expired;
    }

    /** What a run has done, and the batches it may still run. */
    private static final class Run {
        int expired;
        int batchesLeft = MAX_BATCHES_PER_RUN;
    }

    private void sweepTenantsAfter(String after, Run run) {
        while (run.batchesLeft > 0) {
            List<String> tenants = store.dueTenants(after, TENANTS_PER_READ);
            for (String tenant : tenants) {
                if (run.batchesLeft == 0) {
                    return;
                }
                sweepTenant(tenant, run);
                resumeAfter = tenant;
                after = tenant;
            }
            if (tenants.size() < TENANTS_PER_READ) {
                resumeAfter = null; // the last tenant is done: the next run starts from the first
                return;
            }
        }
    }

    /**
     * One tenant's due leases, as a run sweeps each tenant: its first batch, and {@code workers} at once when that
     * batch was full, within one run's bound of batches. Returns how many leases it expired.
     */
    public int sweepTenant(String tenant) {
        Run run = new Run();
        sweepTenant(tenant, run);
        return run.expired;
    }

    private void sweepTenant(String tenant, Run run) {
        int first = sweepOnce(tenant);
        run.expired += first;
        run.batchesLeft--;
        if (first == batchSize && run.batchesLeft > 0) {
            int batchesEach = Math.max(1, run.batchesLeft / workers);
            run.expired += drainTogether(tenant, batchesEach);
            run.batchesLeft = Math.max(0, run.batchesLeft - batchesEach * workers);
        }
    }

    /**
     * Deletes the queue rows of waiting acquires that never answered (their instance stopped), a minute after
     * their wait ran out; returns how many.
     */
    public int deleteAbandonedWaiters() {
        return Housekeeping.drain(batchSize, MAX_BATCHES_PER_RUN, () -> store.deleteAbandonedWaiters(batchSize));
    }

    private int drainTogether(String tenant, int batchesEach) {
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Integer>> swept = new ArrayList<>();
            for (int i = 0; i < workers; i++) {
                swept.add(pool.submit(() -> Housekeeping.drain(batchSize, batchesEach, () -> sweepOnce(tenant))));
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
