package io.leasekeeper.lease;

/**
 * Leases marked active, by the database's clock: {@code active} within their TTL, {@code unswept} past it
 * and waiting for the sweeper, and {@code lagSeconds}, how long ago the oldest unswept one expired.
 */
public record ActiveCounts(long active, long unswept, double lagSeconds) {
}
