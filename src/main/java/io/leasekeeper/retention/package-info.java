/**
 * Retention that keeps up at any event rate: the partitions of {@code lease_event}, made ahead and retired whole,
 * and the ended leases and their keys, deleted by the same rule (docs/guides/operations.md "Retention").
 */
package io.leasekeeper.retention;
