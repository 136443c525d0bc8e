package io.leasekeeper.config;

import java.util.function.IntSupplier;

/** How the periodic jobs (sweeper, idempotency and audit retention) work off a backlog. */
public final class Housekeeping {

    private Housekeeping() {
    }

    /**
     * Runs batches until one comes back short (nothing more is due) or {@code maxBatches} have run, so a
     * huge backlog is worked off over several runs rather than in one endless loop. Returns the total.
     */
    public static int drain(int batchSize, int maxBatches, IntSupplier batch) {
        int total = 0;
        for (int i = 0; i < maxBatches; i++) {
            int done = batch.getAsInt();
            total += done;
            if (done < batchSize) {
                break;
            }
        }
        return total;
    }
}
