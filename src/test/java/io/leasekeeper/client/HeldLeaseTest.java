package io.leasekeeper.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.CuttableProxy;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.wait.KeyWaiters;
import java.net.URI;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * The holder's half of the safety, through the library against the whole service: a held lease is renewed,
 * learns of a revoke from its watch long before any renewal or deadline could tell it, gives up at its local
 * deadline when the network goes silent (before the service's expiry), refuses protected steps once lost,
 * and never releases what is no longer its own.
 */
class HeldLeaseTest extends IntegrationTest {

    private static final LeaseKey KEY = LeaseKey.of(Target.opaque("nightly"), "report");

    @Autowired
    KeyWaiters waiters;

    private LeasekeeperClient client(String token, int port) {
        return LeasekeeperClient.builder(URI.create("http://127.0.0.1:" + port)).token(token)
                .requestTimeout(Duration.ofSeconds(30)).retries(2, Duration.ofMillis(10), Duration.ofMillis(50)).build();
    }

    @Test
    void aRenewedLeaseOutlivesItsTtl() {
        try (HeldLease held = client(writer("alice"), port).hold(AcquireRequest.of(KEY, "job-1", 2), HoldOptions.defaults())) {
            await().atMost(Duration.ofSeconds(20)).until(() -> renewals(held) >= 3);
            // Three renewals of a 2-second TTL: the lease has outlived its first expiry, and is still held.
            assertThat(jdbc.sql("SELECT expires_at > lease_now() AND state = 'active' FROM lease WHERE id = :id")
                    .param("id", held.leaseId()).query(Boolean.class).single()).isTrue();
            held.checkValid();
        }
    }

    @Test
    void aRevokeIsKnownFromTheWatchLongBeforeARenewalOrTheDeadline() throws Exception {
        // TTL 60 s: the first renewal is 20 s away and the local deadline 59 s; only the watch can tell sooner.
        HeldLease held = client(writer("alice"), port).hold(AcquireRequest.of(KEY, "job-1", 60), HoldOptions.defaults());
        awaitWatching();

        client(admin("root"), port).revoke(held.leaseId(), "maintenance");

        assertThat(held.lost().toCompletableFuture().get(5, TimeUnit.SECONDS)).isEqualTo(HeldLease.Loss.REVOKED);
        assertThatThrownBy(held::checkValid).isInstanceOfSatisfying(LeaseLostException.class,
                lost -> assertThat(lost.loss()).isEqualTo(HeldLease.Loss.REVOKED));
        held.close();
    }

    @Test
    void aSilentNetworkLosesTheLeaseAtTheLocalDeadlineBeforeTheServiceExpiresIt() throws Exception {
        try (CuttableProxy proxy = new CuttableProxy("127.0.0.1", port)) {
            long before = System.nanoTime();
            HeldLease held = client(writer("alice"), proxy.port()).hold(AcquireRequest.of(KEY, "job-1", 3),
                    HoldOptions.defaults().withMargin(Duration.ofMillis(500)));
            proxy.stall(); // every byte swallowed: renewals and the watch hang, nothing answers

            CompletableFuture<Long> lostAt = held.lost().toCompletableFuture().thenApply(loss -> System.nanoTime());
            assertThat(held.lost().toCompletableFuture().get(10, TimeUnit.SECONDS)).isEqualTo(HeldLease.Loss.LOCAL_DEADLINE);
            long elapsed = lostAt.get() - before;
            // The service's expiry is at least 3 s after `before` (its clock started the TTL after the request was sent).
            assertThat(elapsed).as("lost before the service could expire the lease")
                    .isLessThan(TimeUnit.SECONDS.toNanos(3));
            assertThat(elapsed).as("not before the local deadline (TTL less the margin)")
                    .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(2_000));
            assertThatThrownBy(held::checkValid).isInstanceOf(LeaseLostException.class);
            held.close();
            proxy.restore();
        }
    }

    @Test
    void aRenewalRefusedByTheServiceMakesTheNextCheckValidRefuse() throws Exception {
        HeldLease held = client(writer("alice"), port).hold(AcquireRequest.of(KEY, "job-1", 3),
                HoldOptions.defaults().withWatch(false));
        held.checkValid();

        client(admin("root"), port).revoke(held.leaseId(), "stop");

        // No watch: the renewal (every second) is refused with 410 LEASE_REVOKED.
        assertThat(held.lost().toCompletableFuture().get(10, TimeUnit.SECONDS)).isEqualTo(HeldLease.Loss.REVOKED);
        assertThatThrownBy(held::checkValid).isInstanceOf(LeaseLostException.class);
        held.close();
    }

    @Test
    void closeAfterALossReleasesNothingOfTheSuccessors() throws Exception {
        HeldLease held = client(writer("alice"), port).hold(AcquireRequest.of(KEY, "job-1", 60), HoldOptions.defaults());
        awaitWatching();
        client(admin("root"), port).revoke(held.leaseId(), "handing over");
        held.lost().toCompletableFuture().get(5, TimeUnit.SECONDS);
        Lease successor = client(writer("alice"), port).acquire(AcquireRequest.of(KEY, "job-2", 60));

        held.close();

        assertThat(client(writer("alice"), port).inspect(successor.leaseId()).active()).isTrue();
        assertThat(jdbc.sql("""
                SELECT count(*) FROM lease_event e JOIN lease l ON l.id = e.lease_id
                WHERE l.tenant = :tenant AND e.type = 'RELEASED'""").param("tenant", tenant).query(Long.class).single())
                .isZero();
    }

    @Test
    void closeReleasesOnceAndIsNoLoss() {
        HeldLease held = client(writer("alice"), port).hold(AcquireRequest.of(KEY, "job-1", 60), HoldOptions.defaults());

        held.close();
        held.close();

        assertThat(client(writer("alice"), port).inspect(held.leaseId()).state()).isEqualTo("released");
        assertThat(held.lost().toCompletableFuture()).isNotDone();
        assertThatThrownBy(held::checkValid).isInstanceOf(IllegalStateException.class)
                .isNotInstanceOf(LeaseLostException.class);
        assertThat(jdbc.sql("""
                SELECT count(*) FROM lease_event e JOIN lease l ON l.id = e.lease_id
                WHERE l.tenant = :tenant AND e.type = 'RELEASED'""").param("tenant", tenant).query(Long.class).single())
                .isEqualTo(1);
    }

    @Test
    void callWithLeaseInterruptsTheWorkOnLossAndSaysSo() throws Exception {
        LeasekeeperClient alice = client(writer("alice"), port);
        CountDownLatch working = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        AtomicReference<UUID> leaseId = new AtomicReference<>();
        CompletableFuture<Object> call = CompletableFuture.supplyAsync(() -> {
            try {
                return alice.callWithLease(AcquireRequest.of(KEY, "job-1", 60), HoldOptions.defaults(), true, lease -> {
                    leaseId.set(lease.leaseId());
                    working.countDown();
                    never.await(); // work that never looks at its lease: only the interrupt stops it
                    return "finished";
                });
            } catch (Exception e) {
                return e;
            }
        });
        assertThat(working.await(10, TimeUnit.SECONDS)).isTrue();
        awaitWatching();

        client(admin("root"), port).revoke(leaseId.get(), "stop the job");

        assertThat(call.get(10, TimeUnit.SECONDS)).isInstanceOfSatisfying(LeaseLostException.class, lost -> {
            assertThat(lost.loss()).isEqualTo(HeldLease.Loss.REVOKED);
            assertThat(lost.getSuppressed()).hasOnlyElementsOfType(InterruptedException.class).hasSize(1);
        });
    }

    @Test
    void callWithLeaseAnswersTheWorksResultAndReleases() throws Exception {
        LeasekeeperClient alice = client(writer("alice"), port);
        AtomicReference<UUID> leaseId = new AtomicReference<>();

        String result = alice.callWithLease(AcquireRequest.of(KEY, "job-1", 60), HoldOptions.defaults(), true, lease -> {
            leaseId.set(lease.leaseId());
            lease.checkValid();
            return "done under " + lease.fencingToken();
        });

        assertThat(result).startsWith("done under ");
        assertThat(alice.inspect(leaseId.get()).state()).isEqualTo("released");
        assertThat(Thread.currentThread().isInterrupted()).isFalse();
    }

    private long renewals(HeldLease held) {
        return jdbc.sql("SELECT count(*) FROM lease_event WHERE lease_id = :id AND type = 'RENEWED'")
                .param("id", held.leaseId()).query(Long.class).single();
    }

    /** The held lease's watch waits in the service. */
    private void awaitWatching() {
        await().atMost(Duration.ofSeconds(10)).until(() -> waiters.count() == 1);
    }
}
