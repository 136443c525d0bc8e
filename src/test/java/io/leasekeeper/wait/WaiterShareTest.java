package io.leasekeeper.wait;

import static io.leasekeeper.wait.WaitingAcquireTest.body;
import static io.leasekeeper.wait.WaitingAcquireTest.id;
import static io.leasekeeper.wait.WaitingAcquireTest.token;
import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.Api;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.TestPropertySource;

/**
 * Contract 1.2, "Load a client caused is never a 5xx", for the instance's waiter places (two here): one tenant
 * filling them cannot switch waiting off for another. The tenant below its share takes the place of the flooding
 * tenant's newest waiter, which answers 429 TENANT_BUSY at once; a tenant at its share of a full cap is answered
 * 429 itself; and a watch whose client hung up gives its place back within about a second, not at its deadline.
 */
@TestPropertySource(properties = "leasekeeper.wait.max-waiters=2")
class WaiterShareTest extends WaitingTest {

    @Test
    void aTenantFillingTheWaiterPlacesGivesOneUpToAnotherTenantAndItsNewestWaiterAnswers429() throws Exception {
        String flooding = tenant;
        Api.Response watched = acquire(writer("alice"), "w", "job", "a", 60);
        CompletableFuture<Api.Response> oldest = watch(reader("alice"), id(watched));
        awaitWaiters(1);
        CompletableFuture<Api.Response> newest = watch(reader("alice"), id(watched));
        awaitWaiters(2);

        tenant = "t-other-" + flooding;
        Api.Response held = acquire(writer("carol"), "k", "job", "c", 60);
        CompletableFuture<Api.Response> waiting = CompletableFuture.supplyAsync(
                () -> api.post("/v1/leases", writer("dave"), body("k", 20, 0)), clients);

        Api.Response evicted = newest.get(10, TimeUnit.SECONDS);
        assertThat(evicted.status()).isEqualTo(429);
        assertThat(evicted.code()).isEqualTo("TENANT_BUSY");
        assertThat(evicted.header("Retry-After")).isEqualTo("1");
        assertThat(oldest).as("the flooding tenant keeps its share").isNotDone();

        tenant = flooding;
        Api.Response refused = api.get("/v1/leases/" + id(watched) + "?waitSeconds=20", reader("alice"));
        assertThat(refused.status()).as("a tenant at its share of a full cap").isEqualTo(429);
        assertThat(refused.code()).isEqualTo("TENANT_BUSY");

        tenant = "t-other-" + flooding;
        release(writer("carol"), id(held), token(held));
        Api.Response granted = waiting.get(10, TimeUnit.SECONDS);
        assertThat(granted.status()).as("the other tenant waited and was granted").isEqualTo(201);
        assertThat(granted.body().get("owner").asString()).isEqualTo("dave");

        tenant = flooding;
        release(writer("alice"), id(watched), token(watched));
        assertThat(oldest.get(10, TimeUnit.SECONDS).body().get("state").asString()).isEqualTo("released");
    }

    @Test
    void aWatchWhoseClientHungUpGivesItsPlaceBackBeforeItsDeadline() throws Exception {
        Api.Response watched = acquire(writer("alice"), "w", "job", "a", 60);
        HttpClient impatient = HttpClient.newHttpClient();
        for (int i = 0; i < 2; i++) {
            CompletableFuture<HttpResponse<String>> gaveUp = impatient.sendAsync(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + port + "/v1/leases/" + id(watched) + "?waitSeconds=30"))
                    .header("Authorization", "Bearer " + reader("alice")).timeout(Duration.ofMillis(500)).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(gaveUp).failsWithin(Duration.ofSeconds(10)).withThrowableThat()
                    .havingCause().isInstanceOf(HttpTimeoutException.class);
        }
        impatient.close();
        // Each watch looks at its client at least every second: both leave long before their 30 s.
        awaitWaiters(0);

        Api.Response held = acquire(writer("carol"), "k", "job", "c", 60);
        CompletableFuture<Api.Response> waiting = CompletableFuture.supplyAsync(
                () -> api.post("/v1/leases", writer("dave"), body("k", 20, 0)), clients);
        awaitWaiters(1);
        release(writer("carol"), id(held), token(held));
        assertThat(waiting.get(10, TimeUnit.SECONDS).status()).isEqualTo(201);
    }

    private CompletableFuture<Api.Response> watch(String token, String leaseId) {
        return CompletableFuture.supplyAsync(() -> api.get("/v1/leases/" + leaseId + "?waitSeconds=20", token), clients);
    }
}
