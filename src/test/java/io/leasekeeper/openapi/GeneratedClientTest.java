package io.leasekeeper.openapi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.DeserializationFeature;
import io.leasekeeper.client.ApiClient;
import io.leasekeeper.client.ApiException;
import io.leasekeeper.client.ApiResponse;
import io.leasekeeper.client.api.LeasesApi;
import io.leasekeeper.client.model.AcquireRequest;
import io.leasekeeper.client.model.Lease;
import io.leasekeeper.client.model.LeaseEvent;
import io.leasekeeper.client.model.Problem;
import io.leasekeeper.client.model.ReleaseRequest;
import io.leasekeeper.client.model.RenewRequest;
import io.leasekeeper.client.model.Target;
import io.leasekeeper.support.IntegrationTest;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A client generated at build time from the committed docs/reference/openapi.json (openapi-generator, Java, the
 * JDK's HTTP client) drives the running service: what the document says is what the service does.
 */
class GeneratedClientTest extends IntegrationTest {

    /**
     * A client of the generated code calling as this token's subject; a response property the document lacks
     * fails the call. Each exchange is printed, a transcript in the build's output.
     */
    private LeasesApi leasesAs(String token) {
        ApiClient client = new ApiClient();
        client.updateBaseUri("http://127.0.0.1:" + port);
        client.setRequestInterceptor(request -> request.header("Authorization", "Bearer " + token));
        client.setResponseInterceptor(response -> System.out.println("generated client: "
                + response.request().method() + " " + response.request().uri().getPath() + " -> "
                + response.statusCode()));
        client.getObjectMapper().enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
        return new LeasesApi(client);
    }

    private static AcquireRequest acquireRequest(String holder) {
        return new AcquireRequest()
                .target(new Target().type(Target.TypeEnum.OPAQUE).value("generated/main"))
                .actor("indexer")
                .holder(holder)
                .ttlSeconds(30);
    }

    @Test
    void theClientGeneratedFromTheCommittedDocumentDrivesALeaseThroughItsLife() throws Exception {
        LeasesApi alice = leasesAs(writer("alice"));

        ApiResponse<Lease> granted = alice.acquireWithHttpInfo(acquireRequest("pod-a"), null);
        assertThat(granted.getStatusCode()).isEqualTo(201);
        Lease lease = granted.getData();
        assertThat(lease.getFencingToken()).isPositive();
        assertThat(lease.getState()).isEqualTo(Lease.StateEnum.ACTIVE);
        assertThat(lease.getOwner()).isEqualTo("alice");
        assertThat(lease.getTarget().getValue()).isEqualTo("generated/main");
        assertThat(granted.getHeaders().get("location")).containsExactly("/v1/leases/" + lease.getLeaseId());
        assertThat(granted.getHeaders().get("x-trace-id")).singleElement().asString().matches("[0-9a-f]{32}");

        ApiException held = catchThrowableOfType(ApiException.class,
                () -> leasesAs(writer("bob")).acquire(acquireRequest("pod-b"), null));
        assertThat(held.getCode()).isEqualTo(409);
        assertThat(held.getResponseHeaders().firstValue("Retry-After")).isPresent();
        Problem problem = new ApiClient().getObjectMapper().readValue(held.getResponseBody(), Problem.class);
        assertThat(problem.getCode()).isEqualTo(Problem.CodeEnum.LEASE_HELD);
        assertThat(problem.getStatus()).isEqualTo(409);
        assertThat(problem.getHolder().getOwner()).isEqualTo("alice");
        assertThat(problem.getHolder().getHolder()).isEqualTo("pod-a");
        assertThat(problem.getHolder().getExpiresAt()).isEqualTo(lease.getExpiresAt());

        Lease renewed = alice.renew(lease.getLeaseId(), new RenewRequest().fencingToken(lease.getFencingToken()), null);
        assertThat(renewed.getFencingToken()).isEqualTo(lease.getFencingToken());
        assertThat(renewed.getRenewedAt()).isNotNull();

        Lease released = alice.release(lease.getLeaseId(),
                new ReleaseRequest().fencingToken(lease.getFencingToken()), null);
        assertThat(released.getState()).isEqualTo(Lease.StateEnum.RELEASED);
        assertThat(released.getEndedAt()).isNotNull();

        List<LeaseEvent> history = alice.history(lease.getLeaseId(), null, null).getItems();
        assertThat(history).extracting(LeaseEvent::getType).containsExactly(
                LeaseEvent.TypeEnum.ACQUIRED, LeaseEvent.TypeEnum.RENEWED, LeaseEvent.TypeEnum.RELEASED);
        assertThat(history).extracting(LeaseEvent::getFencingToken).containsOnly(lease.getFencingToken());
    }

    @Test
    void aRetryWithTheSameIdempotencyKeyReplaysTheGrantWithTheDocumentedHeader() throws Exception {
        LeasesApi alice = leasesAs(writer("alice"));
        String key = "retry-" + tenant;

        ApiResponse<Lease> first = alice.acquireWithHttpInfo(acquireRequest("pod-a"), key);
        ApiResponse<Lease> retry = alice.acquireWithHttpInfo(acquireRequest("pod-a"), key);

        assertThat(first.getHeaders()).doesNotContainKey("idempotent-replayed");
        assertThat(retry.getStatusCode()).isEqualTo(201);
        assertThat(retry.getHeaders().get("idempotent-replayed")).containsExactly("true");
        assertThat(retry.getData().getLeaseId()).isEqualTo(first.getData().getLeaseId());
        assertThat(retry.getData().getFencingToken()).isEqualTo(first.getData().getFencingToken());
    }
}
