package io.leasekeeper.client;

/** A held lease is no longer the holder's: no protected step may run under it. */
public final class LeaseLostException extends IllegalStateException {

    private final HeldLease.Loss loss;

    LeaseLostException(HeldLease.Loss loss, String leaseKey) {
        super("lease on " + leaseKey + " lost: " + loss);
        this.loss = loss;
    }

    public HeldLease.Loss loss() {
        return loss;
    }
}
