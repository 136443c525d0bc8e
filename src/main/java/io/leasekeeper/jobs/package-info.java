/**
 * The service's periodic jobs, each with its interval and the setting that turns it off
 * ({@link io.leasekeeper.jobs.PeriodicJobs}). The jobs' work stays in its feature (the sweeper, the audit's
 * retention, the idempotency records, the lease gauges): this package imports those features and no package
 * imports it.
 */
package io.leasekeeper.jobs;
