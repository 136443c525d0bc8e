package io.leasekeeper.lease;

import io.leasekeeper.client.LeasekeeperClient;
import java.net.URI;
import java.time.Duration;

/**
 * The contract suite through the client library ({@link LibraryLeaseApi}): every typed call of
 * {@link LeasekeeperClient} against the whole service. One attempt per call, so that a 503 or a failed connection
 * is not hidden by the library's retries.
 */
class LeaseContractThroughLibraryTest extends AbstractLeaseContractTest {

    @Override
    protected LeaseApi as(String token) {
        return new LibraryLeaseApi(LeasekeeperClient.builder(URI.create("http://127.0.0.1:" + port)).token(token)
                .retries(1, Duration.ofMillis(1), Duration.ofMillis(1)).build());
    }
}
