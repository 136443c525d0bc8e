package io.leasekeeper.audit;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.client.AcquireRequest;
import io.leasekeeper.client.EventPage;
import io.leasekeeper.client.Lease;
import io.leasekeeper.client.LeaseEvent;
import io.leasekeeper.client.LeaseKey;
import io.leasekeeper.client.LeasekeeperClient;
import io.leasekeeper.client.Target;
import io.leasekeeper.support.Api;
import io.leasekeeper.support.ServiceProcess;
import io.leasekeeper.support.TestDatabase;
import io.leasekeeper.support.TestTokens;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.CyclicBarrier;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * Issue 17: one client renewed one lease 157,708 times in 150 s, and three parallel reads of its history
 * (then answered whole) ended a service with a 256 MiB heap. Here a lease has 200,000 events, the packaged
 * service runs in a heap of {@value #HEAP} (it starts in 32 MiB, slowly; 96 MiB leaves it room for its
 * pools and caches, and is far below what a whole history needs), and three clients read the whole history
 * at once, a page of 1000 at a time: each must see every event in order, and the service must still be up
 * and healthy. Before the paging, one request for this history in the same heap ended in OutOfMemoryError
 * and left the service answering nothing on either port (shown by hand, not kept as a test).
 */
class LongHistoryIT {

    private static final String HEAP = "96m";
    private static final int RENEWALS = 200_000;
    private static final int WALKS = 3;
    private static final int PAGE = 1000;

    // Events as the renewals write them (LeaseStore's RENEW), straight into the table: the trigger refuses
    // only updates and deletes.
    private static final String INSERT_RENEWALS = """
            INSERT INTO lease_event (tenant, lease_id, lease_acquired_at, type, from_state, to_state, fencing_token, at,
                                     principal, request_id, trace_id, details)
            SELECT l.tenant, l.id, l.acquired_at, 'RENEWED', 'active', 'active', l.fencing_token, l.acquired_at + n * interval '1 ms',
                   l.owner, 'renewal-' || n, md5(n::text),
                   jsonb_build_object('previousExpiresAt', rfc3339(l.expires_at + (n - 1) * interval '1 ms'),
                                      'expiresAt', rfc3339(l.expires_at + n * interval '1 ms'),
                                      'ttlSeconds', l.ttl_seconds)
            FROM lease l, generate_series(1, :renewals) AS n
            WHERE l.id = :leaseId
            """;

    @Test
    void aHistoryOf200000EventsIsReadWholeByThreeClientsAtOnceWithinA96MiBHeap() throws Exception {
        TestDatabase.Connection db = TestDatabase.connection();
        JdbcClient jdbc = JdbcClient.create(new DriverManagerDataSource(db.url(), db.username(), db.password()));
        String tenant = "history-" + UUID.randomUUID().toString().substring(0, 8);
        String token = TestTokens.token("alice", tenant, TestTokens.WRITE);
        Path log = Path.of("target", "long-history", "service.log");
        Files.deleteIfExists(log);
        try (ServiceProcess service = ServiceProcess.ofJar(ServiceProcess.builtJar(), HEAP, log, List.of(
                "--spring.datasource.url=" + db.url(), "--spring.datasource.username=" + db.username(),
                "--spring.datasource.password=" + db.password(),
                "--spring.security.oauth2.resourceserver.jwt.public-key-location=" + TestTokens.publicKeyLocation()))) {
            service.start();
            LeasekeeperClient client = LeasekeeperClient.builder(URI.create("http://127.0.0.1:" + service.port()))
                    .token(token).requestTimeout(Duration.ofSeconds(30)).build();
            Lease lease = client.acquire(AcquireRequest.of(LeaseKey.of(Target.opaque("renewed-too-often"), "job"),
                    "pod-1", 3600));
            assertThat(jdbc.sql(INSERT_RENEWALS).param("leaseId", lease.leaseId()).param("renewals", RENEWALS)
                    .update()).isEqualTo(RENEWALS);
            List<Long> expected = jdbc.sql("SELECT count(*), min(id), max(id) FROM lease_event WHERE lease_id = :id")
                    .param("id", lease.leaseId())
                    .query((rs, n) -> List.of(rs.getLong(1), rs.getLong(2), rs.getLong(3))).single();
            assertThat(expected.getFirst()).isEqualTo(RENEWALS + 1L);

            CyclicBarrier together = new CyclicBarrier(WALKS);
            List<Walk> walks;
            try (ExecutorService readers = Executors.newFixedThreadPool(WALKS)) {
                List<Future<Walk>> started = IntStream.range(0, WALKS)
                        .mapToObj(i -> readers.submit(() -> walk(client, lease.leaseId(), together))).toList();
                walks = new ArrayList<>();
                for (Future<Walk> walk : started) {
                    walks.add(walk.get());
                }
            }
            System.out.printf("LongHistoryIT: %d walks of %d events in pages of %d at -Xmx%s took %s%n", WALKS,
                    expected.getFirst(), PAGE, HEAP, walks.stream().map(w -> w.took().toMillis() + " ms").toList());
            for (Walk seen : walks) {
                assertThat(seen.outOfOrder()).as("events not after the one before").isZero();
                assertThat(List.of(seen.events(), seen.first(), seen.last())).as("count, first and last id")
                        .isEqualTo(expected);
                assertThat(seen.pages()).isEqualTo((RENEWALS + 1 + PAGE - 1) / PAGE);
            }

            assertThat(service.isAlive()).as("the service process is alive").isTrue();
            Api probes = new Api(service.managementPort());
            assertThat(probes.get("/actuator/health/liveness", null).status()).isEqualTo(200);
            assertThat(probes.get("/actuator/health/readiness", null).status()).isEqualTo(200);
            assertThat(client.inspect(lease.leaseId()).state()).isEqualTo("active");
            assertThat(Files.readString(log) + Files.readString(service.stderr())).doesNotContain("OutOfMemoryError");
        }
    }

    /** What one full read of the history saw: how many events and pages, the first and last id, and disorder. */
    private record Walk(long events, long first, long last, int pages, int outOfOrder, Duration took) {
    }

    /** Reads the history from the first page to the one whose nextCursor is null, keeping only counts. */
    private static Walk walk(LeasekeeperClient client, UUID leaseId, CyclicBarrier together) throws Exception {
        together.await();
        long start = System.nanoTime();
        long events = 0;
        long first = 0;
        long last = 0;
        int pages = 0;
        int outOfOrder = 0;
        String cursor = null;
        do {
            EventPage page = client.historyPage(leaseId, PAGE, cursor);
            pages++;
            for (LeaseEvent event : page.items()) {
                if (events == 0) {
                    first = event.eventId();
                } else if (event.eventId() <= last) {
                    outOfOrder++;
                }
                last = event.eventId();
                events++;
            }
            cursor = page.nextCursor();
        } while (cursor != null);
        return new Walk(events, first, last, pages, outOfOrder, Duration.ofNanos(System.nanoTime() - start));
    }
}
