package io.leasekeeper.lease;

import io.leasekeeper.client.AcquireRequest;
import io.leasekeeper.client.EventPage;
import io.leasekeeper.client.Lease;
import io.leasekeeper.client.LeaseEvent;
import io.leasekeeper.client.LeaseKey;
import io.leasekeeper.client.LeasePage;
import io.leasekeeper.client.ListQuery;
import io.leasekeeper.client.Problem;
import java.util.List;
import java.util.UUID;

/**
 * The contract's operations as {@link AbstractLeaseContractTest} calls them, as one caller (one bearer token):
 * one implementation per way into the service (raw HTTP, the client library). The requests and answers are
 * the library's plain records; each way builds and reads them itself. Every call answers an {@link Outcome}:
 * what the service answered, or the problem it answered instead.
 */
interface LeaseApi {

    Outcome<Lease> acquire(AcquireRequest request);

    /** {@code ttlSeconds} null keeps the lease's TTL. */
    Outcome<Lease> renew(UUID leaseId, long fencingToken, Integer ttlSeconds);

    Outcome<Lease> release(UUID leaseId, long fencingToken);

    Outcome<Lease> revoke(UUID leaseId, String reason);

    Outcome<Lease> inspect(UUID leaseId);

    Outcome<Lease> watch(UUID leaseId, int waitSeconds);

    Outcome<Lease> current(LeaseKey key);

    Outcome<LeasePage> list(ListQuery query);

    /** Every event of the lease, oldest first, page after page. */
    Outcome<List<LeaseEvent>> history(UUID leaseId);

    /** One page of the lease's history; {@code limit} and {@code cursor} null are not sent. */
    Outcome<EventPage> historyPage(UUID leaseId, Integer limit, String cursor);

    /** A call's outcome: the value answered, or the problem (status, code, holder, Retry-After, …) answered. */
    sealed interface Outcome<T> {

        /** The value answered; fails the test with the problem when the service refused. */
        T value();

        /** The problem answered; fails the test with the value when the service answered one. */
        Problem problem();

        record Answered<T>(T value) implements Outcome<T> {
            @Override
            public Problem problem() {
                throw new AssertionError("expected a problem, the service answered " + value);
            }
        }

        record Refused<T>(Problem problem) implements Outcome<T> {
            @Override
            public T value() {
                throw new AssertionError("expected an answer, the service answered the problem " + problem.status()
                        + " " + problem.code() + ": " + problem.body());
            }
        }
    }
}
