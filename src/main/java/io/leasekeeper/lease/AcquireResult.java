package io.leasekeeper.lease;

import java.time.Instant;

/**
 * Acquire-if-free either grants the key or finds it busy: contention is an answer, not an error. A busy
 * answer names the key's row ({@code keyId}), which a waiting acquire waits for; it is never sent.
 */
sealed interface AcquireResult {

    record Granted(Lease lease, Instant now) implements AcquireResult {
    }

    /** The key is busy: it stays so for {@code remainingMs} unless freed sooner. */
    sealed interface Busy extends AcquireResult {
        long keyId();

        long remainingMs();
    }

    /** Busy: what a contender may know of the holder, never its lease id or fencing token. */
    record Held(long keyId, String owner, String holder, Instant expiresAt, long remainingMs) implements Busy {
    }

    /** Busy: the key's last lease ended involuntarily and its lock-delay runs until {@code availableAt}. */
    record Delayed(long keyId, Instant availableAt, long remainingMs) implements Busy {
    }
}
