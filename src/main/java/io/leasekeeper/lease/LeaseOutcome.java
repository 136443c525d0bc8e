package io.leasekeeper.lease;

import io.leasekeeper.web.ErrorCode;
import java.time.Instant;

/**
 * What a lease operation decided, answered after its commit by {@link LeaseAnswers}, the one place that makes an
 * HTTP answer of it: a grant, the caller's lease changed, a busy key (contention is an answer, not an error), the
 * first answer of a retried request, or a refusal with its code. Nothing changed unless the outcome says so. What is
 * nobody's answer (a contradiction under the key's lock, the database away) is an exception, never an outcome.
 */
sealed interface LeaseOutcome {

    /** A new lease: 201. */
    record Granted(Lease lease, Instant now) implements LeaseOutcome {
    }

    /** The caller's lease after its renew, release or revoke (a repeated release answers it again): 200. */
    record Changed(Lease lease, Instant now) implements LeaseOutcome {
    }

    /**
     * The key is busy: it stays so for {@code remainingMs} unless freed sooner. A busy answer names the key's row
     * ({@code keyId}), which a waiting acquire waits for; it is never sent.
     */
    sealed interface Busy extends LeaseOutcome {
        long keyId();

        long remainingMs();
    }

    /** Busy: what a contender may know of the holder, never its lease id or fencing token (409 LEASE_HELD). */
    record Held(long keyId, String owner, String holder, Instant expiresAt, long remainingMs) implements Busy {
    }

    /** Busy: the key's last lease ended involuntarily and its lock-delay runs until {@code availableAt}. */
    record Delayed(long keyId, Instant availableAt, long remainingMs) implements Busy {
    }

    /** A retry under a known Idempotency-Key: its first answer's status, with the lease as it is now. */
    record Replayed(int status, Lease lease, Instant now) implements LeaseOutcome {
    }

    /** Refused, having changed nothing: answered as the problem {@code code}. */
    record Refused(ErrorCode code, String detail) implements LeaseOutcome {
    }
}
