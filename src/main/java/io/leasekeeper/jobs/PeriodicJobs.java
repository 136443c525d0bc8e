package io.leasekeeper.jobs;

import io.leasekeeper.config.Housekeeping;
import io.leasekeeper.config.LeasekeeperProperties;
import io.leasekeeper.idempotency.IdempotencyStore;
import io.leasekeeper.metrics.LeaseGauges;
import io.leasekeeper.retention.AuditRetention;
import io.leasekeeper.sweeper.LeaseSweeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.config.ScheduledTaskRegistrar;

/**
 * Every periodic job of the service, declared in this one place: each runs again its interval after its previous
 * run ended, and a failed run (the database away, say) is logged and the schedule goes on. Every instance runs
 * them; the jobs are safe to run on several instances at once (each says why). The features keep the work itself;
 * this package depends on them and nothing depends on it.
 */
@Configuration(proxyBeanMethods = false)
@EnableScheduling
class PeriodicJobs implements SchedulingConfigurer {

    private static final Logger log = LoggerFactory.getLogger(PeriodicJobs.class);
    /** Idempotency records deleted a batch at a time, at most this many batches a run. */
    private static final int IDEMPOTENCY_BATCH = 1000;
    private static final int IDEMPOTENCY_BATCHES = 100;

    private final LeasekeeperProperties properties;
    private final LeaseSweeper sweeper;
    private final AuditRetention audit;
    private final IdempotencyStore idempotency;
    private final LeaseGauges gauges;

    PeriodicJobs(LeasekeeperProperties properties, LeaseSweeper sweeper, AuditRetention audit,
                 IdempotencyStore idempotency, LeaseGauges gauges) {
        this.properties = properties;
        this.sweeper = sweeper;
        this.audit = audit;
        this.idempotency = idempotency;
        this.gauges = gauges;
    }

    @Override
    public void configureTasks(ScheduledTaskRegistrar registrar) {
        // The sweeper: the expiry of due leases, and the queue rows of waiting acquires that never answered.
        if (properties.sweeper().enabled()) {
            registrar.addFixedDelayTask(keepSchedule("Sweeper", () -> {
                sweeper.sweepDue();
                sweeper.deleteAbandonedWaiters();
            }), properties.sweeper().interval());
        }
        // The audit's partitions made ahead, and (unless cleanup is off) ended leases and partitions past retention.
        registrar.addFixedDelayTask(keepSchedule("Retention", audit::run), properties.audit().cleanupInterval());
        // Idempotency records past their retention.
        if (properties.idempotency().cleanupEnabled()) {
            registrar.addFixedDelayTask(keepSchedule("Idempotency retention",
                    () -> Housekeeping.drain(IDEMPOTENCY_BATCH, IDEMPOTENCY_BATCHES,
                            () -> idempotency.deleteExpired(IDEMPOTENCY_BATCH))),
                    properties.idempotency().cleanupInterval());
        }
        // The lease gauges, read from the database so that a scrape never queries it.
        registrar.addFixedDelayTask(gauges::refresh, properties.metrics().gaugeRefresh());
    }

    /** The run as a scheduled task: a failure (the database away, say) is logged and the schedule goes on. */
    private static Runnable keepSchedule(String job, Runnable run) {
        return () -> {
            try {
                run.run();
            } catch (RuntimeException e) {
                log.warn("{} run failed: {}", job, e.toString());
            }
        };
    }
}
