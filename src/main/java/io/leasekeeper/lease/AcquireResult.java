package io.leasekeeper.lease;

import java.time.Instant;

/** Acquire-if-free either grants the key or finds it held: contention is an answer, not an error. */
sealed interface AcquireResult {

    record Granted(Lease lease, Instant now) implements AcquireResult {
    }

    /** What a contender may know of the holder: never its lease id or fencing token. */
    record Held(String owner, String holder, Instant expiresAt, long remainingMs) implements AcquireResult {
    }
}
