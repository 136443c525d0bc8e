package io.leasekeeper.client;

import java.time.Duration;

/**
 * What a client tells about the leases it holds and the keys it waits for: the starter counts these as
 * Micrometer metrics; an application may log them. Called on the client's own threads, so it must be quick;
 * an exception it throws is ignored.
 */
public interface LeaseListener {

    /** A held lease's renewal succeeded. */
    default void renewed(HeldLease lease) {
    }

    /** A held lease's renewal failed and will be retried until the local deadline (503, a timeout, …). */
    default void renewFailed(HeldLease lease, RuntimeException failure) {
    }

    /** A held lease was lost, and why. */
    default void lost(HeldLease lease, HeldLease.Loss loss) {
    }

    /** A waiting acquire (its {@code waitSeconds} above 0) ended: how long it waited and whether it got the key. */
    default void waited(LeaseKey key, Duration waited, boolean acquired) {
    }

    LeaseListener NONE = new LeaseListener() {
    };
}
