package io.leasekeeper.lease;

import io.leasekeeper.idempotency.IdempotencyKeys;
import io.leasekeeper.key.LeaseKey;
import io.leasekeeper.web.ApiException;
import io.leasekeeper.web.ErrorCode;
import io.leasekeeper.web.Problems;
import jakarta.servlet.http.HttpServletRequest;
import java.net.URI;
import java.util.Map;
import org.springframework.http.HttpHeaders;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;

/**
 * The one place a lease operation's {@link LeaseOutcome} becomes its HTTP answer, made after the operation's commit:
 * a grant 201 with {@code Location}, a change 200, a busy key 409 with {@code Retry-After} (rounded up to whole
 * seconds), a replay the first answer's status with {@code Idempotent-Replayed: true}, and a refusal its problem
 * (rendered, as every problem is, by {@code web.ApiProblems}).
 */
final class LeaseAnswers {

    private LeaseAnswers() {
    }

    /** The answer of an outcome; {@code key}: the key an acquire named (a busy outcome names it in its detail). */
    static ResponseEntity<?> of(LeaseOutcome outcome, LeaseKey key, HttpServletRequest request) {
        return switch (outcome) {
            case LeaseOutcome.Granted g -> ResponseEntity.created(location(g.lease()))
                    .body(LeaseView.of(g.lease(), g.now()));
            case LeaseOutcome.Changed c -> ResponseEntity.ok(LeaseView.of(c.lease(), c.now()));
            case LeaseOutcome.Replayed r -> replayed(r);
            case LeaseOutcome.Held h -> leaseHeld(h, key, request);
            case LeaseOutcome.Delayed d -> lockDelayed(d, key, request);
            case LeaseOutcome.Refused r -> throw new ApiException(r.code(), r.detail());
        };
    }

    /** A retry's answer: the first request's status, with the lease as it is now. */
    private static ResponseEntity<?> replayed(LeaseOutcome.Replayed replay) {
        var builder = ResponseEntity.status(replay.status()).header(IdempotencyKeys.REPLAYED_HEADER, "true");
        if (replay.status() == 201) {
            builder.location(location(replay.lease()));
        }
        return builder.body(LeaseView.of(replay.lease(), replay.now()));
    }

    private static URI location(Lease lease) {
        return URI.create("/v1/leases/" + lease.id());
    }

    private static ResponseEntity<ProblemDetail> leaseHeld(LeaseOutcome.Held held, LeaseKey key,
                                                           HttpServletRequest request) {
        ProblemDetail problem = Problems.of(ErrorCode.LEASE_HELD,
                "The key " + key.canonical() + " is held by another lease.", request);
        problem.setProperty("holder", Map.of("owner", held.owner(), "holder", held.holder(),
                "expiresAt", held.expiresAt(), "remainingMs", held.remainingMs()));
        return busy(problem, held.remainingMs());
    }

    private static ResponseEntity<ProblemDetail> lockDelayed(LeaseOutcome.Delayed delayed, LeaseKey key,
                                                             HttpServletRequest request) {
        ProblemDetail problem = Problems.of(ErrorCode.LOCK_DELAYED, "The key " + key.canonical()
                + " is in the lock-delay of a lease that ended involuntarily.", request);
        problem.setProperty("availableAt", delayed.availableAt());
        return busy(problem, delayed.remainingMs());
    }

    /** A 409 for a busy key, with Retry-After in whole seconds, rounded up. */
    private static ResponseEntity<ProblemDetail> busy(ProblemDetail problem, long remainingMs) {
        long retryAfterSeconds = Math.max(1, (remainingMs + 999) / 1000);
        return ResponseEntity.status(problem.getStatus())
                .header(HttpHeaders.RETRY_AFTER, Long.toString(retryAfterSeconds))
                .body(problem);
    }
}
