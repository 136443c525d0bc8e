package io.leasekeeper.wait;

import static io.leasekeeper.wait.WaitingAcquireTest.body;
import static io.leasekeeper.wait.WaitingAcquireTest.id;
import static io.leasekeeper.wait.WaitingAcquireTest.token;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.Api;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Contract 1.1, "Watching a lease" and "Lock-delay": a watch ends when the lease stops being active
 * (revoke, expiry by time) and not on a renew; after an involuntary end the key stays delayed for the
 * lease's lockDelaySeconds, after a release it does not, and a waiting acquire waits through the delay.
 */
class WatchAndLockDelayTest extends WaitingTest {

    @Test
    void aWatchEndsAsSoonAsTheLeaseIsRevoked() throws Exception {
        Api.Response lease = acquire(writer("alice"), "k", "job", "a", 60);
        CompletableFuture<Api.Response> watch = watch(reader("alice"), id(lease), 20);
        awaitWaiters(1);

        revoke(admin("root"), id(lease), "maintenance");

        Api.Response ended = watch.get(10, TimeUnit.SECONDS);
        assertThat(ended.status()).isEqualTo(200);
        assertThat(ended.body().get("state").asString()).isEqualTo("revoked");
    }

    @Test
    void aWatchEndsWhenTheLeaseExpiresByTime() throws Exception {
        Api.Response lease = acquire(writer("alice"), "k", "job", "a", 2);
        Api.Response ended = watch(reader("alice"), id(lease), 20).get(10, TimeUnit.SECONDS);
        assertThat(ended.body().get("state").asString()).isEqualTo("expired");
        assertThat(Instant.parse(ended.body().get("serverTime").asString()))
                .isAfterOrEqualTo(Instant.parse(lease.body().get("expiresAt").asString()));
    }

    @Test
    void aRenewDoesNotEndAWatch() throws Exception {
        Api.Response lease = acquire(writer("alice"), "k", "job", "a", 60);
        CompletableFuture<Api.Response> watch = watch(reader("alice"), id(lease), 2);
        awaitWaiters(1);
        Api.Response renewed = renew(writer("alice"), id(lease), token(lease));

        Api.Response answered = watch.get(10, TimeUnit.SECONDS);
        assertThat(answered.body().get("state").asString()).isEqualTo("active");
        assertThat(answered.body().get("expiresAt").asString()).isEqualTo(renewed.body().get("expiresAt").asString());
    }

    @Test
    void aWatchOfALeaseThatIsNotActiveAnswersAtOnceAndBadBoundsAre400() {
        Api.Response lease = acquire(writer("alice"), "k", "job", "a", 60);
        release(writer("alice"), id(lease), token(lease));
        assertThat(api.get("/v1/leases/" + id(lease) + "?waitSeconds=30", reader("alice"))
                .body().get("state").asString()).isEqualTo("released");
        assertThat(waiters.count()).isZero();
        for (String wait : new String[] {"-1", "31"}) {
            Api.Response refused = api.get("/v1/leases/" + id(lease) + "?waitSeconds=" + wait, reader("alice"));
            assertThat(refused.status()).isEqualTo(400);
            assertThat(refused.code()).isEqualTo("VALIDATION_FAILED");
        }
    }

    @Test
    void aRevokeDelaysTheKeyForTheLeasesLockDelay() {
        Api.Response lease = api.post("/v1/leases", writer("alice"), body("k", 0, 30));
        assertThat(lease.body().get("lockDelaySeconds").asInt()).isEqualTo(30);
        Api.Response revoked = revoke(admin("root"), id(lease), "fenced off");

        Api.Response delayed = api.post("/v1/leases", writer("bob"), body("k", 0, 0));
        assertThat(delayed.status()).isEqualTo(409);
        assertThat(delayed.code()).isEqualTo("LOCK_DELAYED");
        assertThat(Instant.parse(delayed.body().get("availableAt").asString()))
                .isEqualTo(Instant.parse(revoked.body().get("endedAt").asString()).plusSeconds(30));
        assertThat(Integer.parseInt(delayed.header("Retry-After"))).isBetween(1, 30);
    }

    @Test
    void anExpiryDelaysTheKeyFromTheExpiryInstant() {
        Api.Response lease = api.post("/v1/leases", writer("alice"), body("k", 0, 30));
        backdateExpiry(id(lease));
        Instant expiresAt = Instant.parse(api.get("/v1/leases/" + id(lease), reader("alice")).body()
                .get("expiresAt").asString());

        Api.Response delayed = api.post("/v1/leases", writer("bob"), body("k", 0, 0));
        assertThat(delayed.code()).isEqualTo("LOCK_DELAYED");
        assertThat(Instant.parse(delayed.body().get("availableAt").asString())).isEqualTo(expiresAt.plusSeconds(30));
        // The acquire recorded the expiry on its way.
        assertThat(eventTypes(id(lease))).containsExactly("ACQUIRED", "EXPIRED");
    }

    @Test
    void theSweepersExpiryDelaysTheKeyToo() {
        Api.Response lease = api.post("/v1/leases", writer("alice"), body("k", 0, 30));
        backdateExpiry(id(lease));
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            sweeper.sweepDue();
            return eventTypes(id(lease)).contains("EXPIRED");
        });
        assertThat(api.post("/v1/leases", writer("bob"), body("k", 0, 0)).code()).isEqualTo("LOCK_DELAYED");
    }

    @Test
    void aReleaseFreesTheKeyAtOnceWhateverTheLockDelay() {
        Api.Response lease = api.post("/v1/leases", writer("alice"), body("k", 0, 60));
        release(writer("alice"), id(lease), token(lease));
        assertThat(api.post("/v1/leases", writer("bob"), body("k", 0, 0)).status()).isEqualTo(201);
    }

    @Test
    void aWaitingAcquireWaitsThroughTheLockDelay() throws Exception {
        Api.Response lease = api.post("/v1/leases", writer("alice"), body("k", 0, 2));
        Api.Response revoked = revoke(admin("root"), id(lease), "fenced off");

        Api.Response granted = CompletableFuture.supplyAsync(
                () -> api.post("/v1/leases", writer("bob"), body("k", 20, 0)), clients).get(15, TimeUnit.SECONDS);
        assertThat(granted.status()).isEqualTo(201);
        assertThat(Instant.parse(granted.body().get("acquiredAt").asString()))
                .isAfterOrEqualTo(Instant.parse(revoked.body().get("endedAt").asString()).plusSeconds(2));
    }

    @Test
    void lockDelayAbove60SecondsIsAValidationFailure() {
        Api.Response refused = api.post("/v1/leases", writer("alice"), body("k", 0, 61));
        assertThat(refused.status()).isEqualTo(400);
        assertThat(refused.body().get("errors").get(0).get("field").asString()).isEqualTo("lockDelaySeconds");
    }

    private CompletableFuture<Api.Response> watch(String token, String leaseId, int waitSeconds) {
        return CompletableFuture.supplyAsync(
                () -> api.get("/v1/leases/" + leaseId + "?waitSeconds=" + waitSeconds, token), clients);
    }

}
