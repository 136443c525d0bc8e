package io.leasekeeper.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.leasekeeper.support.IntegrationTest;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The client library (module client/) against the whole service: every operation as a typed call, and each
 * problem a client can provoke through it arriving as its own exception type with its fields.
 */
class LeasekeeperClientTest extends IntegrationTest {

    private LeasekeeperClient as(String token) {
        return LeasekeeperClient.builder(URI.create("http://127.0.0.1:" + port)).token(token)
                .retries(2, Duration.ofMillis(10), Duration.ofMillis(50)).build();
    }

    private static final LeaseKey KEY = LeaseKey.of(Target.opaque("repo/main"), "indexer").withOperation("reindex");

    @Test
    void everyOperationOfALeasesLifeAsATypedCall() {
        LeasekeeperClient alice = as(writer("alice"));
        Lease acquired = alice.acquire(AcquireRequest.of(KEY, "pod-1", 30).withJobId("job-1")
                .withMetadata(Map.of("build", 42)));
        assertThat(acquired.active()).isTrue();
        assertThat(acquired.key()).isEqualTo(tenant + "/default/opaque:repo%2Fmain/indexer/reindex");
        assertThat(acquired.owner()).isEqualTo("alice");
        assertThat(acquired.metadata()).containsEntry("build", 42);
        assertThat(acquired.remainingMs()).isBetween(1L, 30_000L);

        Lease renewed = alice.renew(acquired.leaseId(), acquired.fencingToken(), 60);
        assertThat(renewed.ttlSeconds()).isEqualTo(60);
        assertThat(renewed.fencingToken()).isEqualTo(acquired.fencingToken());
        assertThat(alice.inspect(acquired.leaseId()).renewedAt()).isNotNull();
        assertThat(alice.current(KEY).leaseId()).isEqualTo(acquired.leaseId());
        assertThat(alice.list(ListQuery.active().withActor("indexer")).items()).extracting(Lease::leaseId)
                .containsExactly(acquired.leaseId());

        Lease released = alice.release(acquired.leaseId(), acquired.fencingToken());
        assertThat(released.state()).isEqualTo("released");
        assertThat(alice.history(acquired.leaseId())).extracting(LeaseEvent::type)
                .containsExactly("ACQUIRED", "RENEWED", "RELEASED");
        assertThat(alice.watch(acquired.leaseId(), 5).state()).as("a watch of an ended lease answers at once")
                .isEqualTo("released");

        Lease next = alice.acquire(AcquireRequest.of(KEY, "pod-1", 30));
        Lease revoked = as(admin("root")).revoke(next.leaseId(), "maintenance");
        assertThat(revoked.state()).isEqualTo("revoked");
        assertThat(next.fencingToken()).isGreaterThan(acquired.fencingToken());
    }

    @Test
    void aBusyKeyIsLeaseHeldWithItsHolderAndRetryAfter() {
        as(writer("alice")).acquire(AcquireRequest.of(KEY, "pod-1", 30));

        assertThatThrownBy(() -> as(writer("bob")).acquire(AcquireRequest.of(KEY, "pod-2", 30)))
                .isInstanceOfSatisfying(ProblemException.LeaseHeld.class, held -> {
                    assertThat(held.status()).isEqualTo(409);
                    assertThat(held.holder().owner()).isEqualTo("alice");
                    assertThat(held.holder().holder()).isEqualTo("pod-1");
                    assertThat(held.holder().expiresAt()).isNotNull();
                    assertThat(held.retryAfter()).isPresent();
                });
    }

    @Test
    void aKeyInItsLockDelayIsLockDelayedWithAvailableAt() {
        Lease held = as(writer("alice")).acquire(AcquireRequest.of(KEY, "pod-1", 30).withLockDelaySeconds(30));
        as(admin("root")).revoke(held.leaseId(), "stuck");

        assertThatThrownBy(() -> as(writer("bob")).acquire(AcquireRequest.of(KEY, "pod-2", 30)))
                .isInstanceOfSatisfying(ProblemException.LockDelayed.class, delayed ->
                        assertThat(delayed.availableAt()).isAfter(held.acquiredAt()));
    }

    @Test
    void aWaitingAcquireIsGrantedWhenTheHolderReleases() throws Exception {
        LeasekeeperClient alice = as(writer("alice"));
        Lease held = alice.acquire(AcquireRequest.of(KEY, "pod-1", 60));
        var waiting = java.util.concurrent.CompletableFuture.supplyAsync(() ->
                as(writer("bob")).acquire(AcquireRequest.of(KEY, "pod-2", 30).withWaitSeconds(20)));
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() ->
                jdbc.sql("SELECT count(*) FROM lease_waiter WHERE tenant = :tenant").param("tenant", tenant)
                        .query(Long.class).single() == 1);

        alice.release(held.leaseId(), held.fencingToken());

        Lease granted = waiting.get(10, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(granted.owner()).isEqualTo("bob");
        assertThat(granted.fencingToken()).isGreaterThan(held.fencingToken());
    }

    @Test
    void aLeaseThatIsNoLongerTheCallersIsALeaseGoneOfItsKind() {
        LeasekeeperClient alice = as(writer("alice"));
        Lease held = alice.acquire(AcquireRequest.of(KEY, "pod-1", 30));

        assertThatThrownBy(() -> alice.renew(held.leaseId(), held.fencingToken() + 1, null))
                .isInstanceOf(ProblemException.FencingTokenMismatch.class).isInstanceOf(ProblemException.LeaseGone.class);
        assertThatThrownBy(() -> as(writer("mallory")).release(held.leaseId(), held.fencingToken()))
                .isInstanceOf(ProblemException.NotLeaseOwner.class);
        assertThatThrownBy(() -> alice.renew(UUID.randomUUID(), 1, null))
                .isInstanceOf(ProblemException.LeaseNotFound.class);
        as(admin("root")).revoke(held.leaseId(), "gone");
        assertThatThrownBy(() -> alice.renew(held.leaseId(), held.fencingToken(), null))
                .isInstanceOf(ProblemException.LeaseRevoked.class).isInstanceOf(ProblemException.LeaseGone.class);
        assertThatThrownBy(() -> as(admin("root")).revoke(held.leaseId(), "again"))
                .isInstanceOf(ProblemException.LeaseNotActive.class);

        Lease other = alice.acquire(AcquireRequest.of(KEY, "pod-1", 30));
        alice.release(other.leaseId(), other.fencingToken());
        assertThatThrownBy(() -> alice.renew(other.leaseId(), other.fencingToken(), null))
                .isInstanceOf(ProblemException.LeaseReleased.class);
        Lease expiring = alice.acquire(AcquireRequest.of(KEY, "pod-1", 30));
        jdbc.sql("UPDATE lease SET expires_at = lease_now() - interval '1 second' WHERE id = :id")
                .param("id", expiring.leaseId()).update();
        assertThatThrownBy(() -> alice.renew(expiring.leaseId(), expiring.fencingToken(), null))
                .isInstanceOf(ProblemException.LeaseExpired.class);
        assertThatThrownBy(() -> alice.current(KEY)).isInstanceOf(ProblemException.NoActiveLease.class);
    }

    @Test
    void badInputIsValidationFailedWithTheFieldsAtFault() {
        assertThatThrownBy(() -> as(writer("alice")).acquire(AcquireRequest.of(KEY, "pod-1", 0).withWaitSeconds(31)))
                .isInstanceOfSatisfying(ProblemException.ValidationFailed.class, failed -> {
                    assertThat(failed.status()).isEqualTo(400);
                    assertThat(failed.errors()).extracting(Problem.FieldError::field)
                            .contains("ttlSeconds", "waitSeconds");
                });
        // Negative values are sent, not dropped, so that the service refuses them.
        assertThatThrownBy(() -> as(writer("alice")).acquire(AcquireRequest.of(KEY, "pod-1", 30).withWaitSeconds(-1)
                .withLockDelaySeconds(-1)))
                .isInstanceOfSatisfying(ProblemException.ValidationFailed.class, failed -> assertThat(failed.errors())
                        .extracting(Problem.FieldError::field).contains("waitSeconds", "lockDelaySeconds"));
    }

    @Test
    void credentialsTheServiceRefusesAreUnauthenticatedOrInsufficientScope() {
        assertThatThrownBy(() -> as("not-a-token").inspect(UUID.randomUUID()))
                .isInstanceOf(ProblemException.Unauthenticated.class);
        Lease held = as(writer("alice")).acquire(AcquireRequest.of(KEY, "pod-1", 30));
        assertThatThrownBy(() -> as(reader("carol")).release(held.leaseId(), held.fencingToken()))
                .isInstanceOf(ProblemException.InsufficientScope.class);
        assertThatThrownBy(() -> as(writer("alice")).revoke(held.leaseId(), "not mine to revoke"))
                .isInstanceOf(ProblemException.InsufficientScope.class);
    }

    @Test
    void theSameIdempotencyKeyIsNeverSentForTwoRequests() {
        LeasekeeperClient alice = as(writer("alice"));
        Lease first = alice.acquire(AcquireRequest.of(KEY, "pod-1", 30));
        alice.release(first.leaseId(), first.fencingToken());
        Lease second = alice.acquire(AcquireRequest.of(KEY, "pod-1", 30));
        assertThat(second.leaseId()).as("a second acquire is a new request, not a replay of the first")
                .isNotEqualTo(first.leaseId());
        List<String> requestIds = jdbc.sql("""
                SELECT e.request_id FROM lease_event e JOIN lease l ON l.id = e.lease_id
                WHERE l.tenant = :tenant AND e.type = 'ACQUIRED' ORDER BY e.id""")
                .param("tenant", tenant).query(String.class).list();
        assertThat(requestIds).hasSize(2).doesNotHaveDuplicates().doesNotContainNull();
    }
}
