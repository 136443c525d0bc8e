package io.leasekeeper.lease;

import io.leasekeeper.client.AcquireRequest;
import io.leasekeeper.client.EventPage;
import io.leasekeeper.client.Lease;
import io.leasekeeper.client.LeaseEvent;
import io.leasekeeper.client.LeaseKey;
import io.leasekeeper.client.LeasePage;
import io.leasekeeper.client.LeasekeeperClient;
import io.leasekeeper.client.ListQuery;
import io.leasekeeper.client.ProblemException;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The contract's operations through the client library ({@link LeasekeeperClient}): a {@link ProblemException}
 * becomes the refused outcome with its problem. The library must have a type of its own for every code the
 * service answers; a code that reaches the caller as the bare base class fails the test.
 */
final class LibraryLeaseApi implements LeaseApi {

    private final LeasekeeperClient client;

    LibraryLeaseApi(LeasekeeperClient client) {
        this.client = client;
    }

    @Override
    public Outcome<Lease> acquire(AcquireRequest request) {
        return call(() -> client.acquire(request));
    }

    @Override
    public Outcome<Lease> renew(UUID leaseId, long fencingToken, Integer ttlSeconds) {
        return call(() -> client.renew(leaseId, fencingToken, ttlSeconds));
    }

    @Override
    public Outcome<Lease> release(UUID leaseId, long fencingToken) {
        return call(() -> client.release(leaseId, fencingToken));
    }

    @Override
    public Outcome<Lease> revoke(UUID leaseId, String reason) {
        return call(() -> client.revoke(leaseId, reason));
    }

    @Override
    public Outcome<Lease> inspect(UUID leaseId) {
        return call(() -> client.inspect(leaseId));
    }

    @Override
    public Outcome<Lease> watch(UUID leaseId, int waitSeconds) {
        return call(() -> client.watch(leaseId, waitSeconds));
    }

    @Override
    public Outcome<Lease> current(LeaseKey key) {
        return call(() -> client.current(key));
    }

    @Override
    public Outcome<LeasePage> list(ListQuery query) {
        return call(() -> client.list(query));
    }

    @Override
    public Outcome<List<LeaseEvent>> history(UUID leaseId) {
        return call(() -> client.history(leaseId));
    }

    @Override
    public Outcome<EventPage> historyPage(UUID leaseId, Integer limit, String cursor) {
        return call(() -> client.historyPage(leaseId, limit, cursor));
    }

    private static <T> Outcome<T> call(Supplier<T> call) {
        try {
            return new Outcome.Answered<>(call.get());
        } catch (ProblemException e) {
            if (e.getClass() == ProblemException.class) {
                throw new AssertionError("the library has no exception type for the service's code " + e.code(), e);
            }
            return new Outcome.Refused<>(e.problem());
        }
    }
}
