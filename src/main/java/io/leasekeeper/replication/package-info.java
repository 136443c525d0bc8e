/**
 * What the database's replication promises the leases (issue 18): the settings that decide whether a granted
 * lease can be lost in a failover, reported at start and in the readiness details (docs/guides/deployment.md,
 * "Replication").
 */
package io.leasekeeper.replication;
