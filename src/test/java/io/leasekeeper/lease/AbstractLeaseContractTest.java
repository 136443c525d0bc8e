package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.client.AcquireRequest;
import io.leasekeeper.client.EventPage;
import io.leasekeeper.client.Lease;
import io.leasekeeper.client.LeaseEvent;
import io.leasekeeper.client.LeaseKey;
import io.leasekeeper.client.LeasePage;
import io.leasekeeper.client.ListQuery;
import io.leasekeeper.client.Problem;
import io.leasekeeper.client.Target;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.TestTokens;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Every row of the contract's operations table, and what its answers promise, written once against
 * {@link LeaseApi} and run by each way into the service: raw HTTP ({@link LeaseContractOverHttpTest}) and the
 * client library ({@link LeaseContractThroughLibraryTest}). What only the wire shows (headers, exact JSON, bodies
 * no typed call can send) is tested in the HTTP subclass.
 */
abstract class AbstractLeaseContractTest extends IntegrationTest {

    /** The service as the caller with this bearer token sees it. */
    protected abstract LeaseApi as(String token);

    protected static LeaseKey key(String target, String actor) {
        return LeaseKey.of(Target.opaque(target), actor);
    }

    protected static LeaseApi.Outcome<Lease> acquire(LeaseApi caller, String target, String actor, String holder, int ttl) {
        return caller.acquire(AcquireRequest.of(key(target, actor), holder, ttl));
    }

    protected static void assertRefused(LeaseApi.Outcome<?> outcome, int status, String code) {
        Problem problem = outcome.problem();
        assertThat(problem.status()).as(problem.body()).isEqualTo(status);
        assertThat(problem.code()).as(problem.body()).isEqualTo(code);
    }

    @Test
    void acquireIfFreeGrantsTheFullRepresentation() {
        LeaseKey key = new LeaseKey(null, Target.opaque("  repo/main  "), "Indexer", "Reindex");
        Lease l = as(writer("svc-indexer")).acquire(AcquireRequest.of(key, "indexer-7f9c/pod-2", 30).withJobId("job-1")
                .withTraceId("trace-1").withMetadata(Map.of("shard", 3))).value();

        assertThat(l.leaseId()).isNotNull();
        assertThat(l.key()).isEqualTo(tenant + "/default/opaque:repo%2Fmain/indexer/reindex");
        assertThat(l.tenant()).isEqualTo(tenant);
        assertThat(l.program()).isEqualTo("default");
        assertThat(l.target()).isEqualTo(new Target("opaque", "repo/main"));
        assertThat(l.actor()).isEqualTo("indexer");
        assertThat(l.operation()).isEqualTo("reindex");
        assertThat(l.owner()).isEqualTo("svc-indexer");
        assertThat(l.holder()).isEqualTo("indexer-7f9c/pod-2");
        assertThat(l.fencingToken()).isPositive();
        assertThat(l.state()).isEqualTo("active");
        assertThat(l.ttlSeconds()).isEqualTo(30);
        assertThat(l.maxLifetimeSeconds()).isEqualTo(86400);
        assertThat(l.lockDelaySeconds()).isZero();
        assertThat(l.renewedAt()).isNull();
        assertThat(l.endedAt()).isNull();
        assertThat(l.endReason()).isNull();
        assertThat(l.jobId()).isEqualTo("job-1");
        assertThat(l.traceId()).isEqualTo("trace-1");
        assertThat(l.metadata()).isEqualTo(Map.of("shard", 3));
        assertThat(l.expiresAt()).isEqualTo(l.acquiredAt().plusSeconds(30));
        assertThat(l.maxExpiresAt()).isEqualTo(l.acquiredAt().plusSeconds(86400));
        assertThat(l.serverTime()).isBetween(l.acquiredAt(), l.expiresAt());
        assertThat(l.remainingMs()).isBetween(1L, 30_000L);
    }

    @Test
    void acquireOnAHeldKeyAnswers409LeaseHeldWithHolderAndRetryAfterButNoIdOrToken() {
        Lease first = acquire(as(writer("alice")), "build-42", "runner", "pod-a", 30).value();
        Problem held = acquire(as(writer("bob")), "build-42", "runner", "pod-b", 30).problem();

        assertThat(held.status()).isEqualTo(409);
        assertThat(held.code()).isEqualTo("LEASE_HELD");
        assertThat(held.holder().owner()).isEqualTo("alice");
        assertThat(held.holder().holder()).isEqualTo("pod-a");
        assertThat(held.holder().expiresAt()).isEqualTo(first.expiresAt());
        assertThat(held.holder().remainingMs()).isBetween(1L, 30_000L);
        assertThat(held.retryAfter()).isBetween(Duration.ofSeconds(1), Duration.ofSeconds(30));
        assertThat(held.body()).doesNotContain(first.leaseId().toString()).doesNotContain("\"fencingToken\"");
        assertThat(held.traceId()).isNotBlank();
    }

    @Test
    void keysDifferByOperationProgramAndActorButNotByCaseOrSurroundingWhitespace() {
        LeaseApi alice = as(writer("alice"));
        acquire(alice, "x", "a", "h", 30).value();
        assertRefused(acquire(alice, " x ", "A", "h", 30), 409, "LEASE_HELD");
        acquire(alice, "x", "b", "h", 30).value();
        alice.acquire(AcquireRequest.of(key("x", "a").withOperation("op"), "h", 30)).value();
        alice.acquire(AcquireRequest.of(key("x", "a").withProgram("billing"), "h", 30)).value();
    }

    @Test
    void typedTargetsAreNormalizedIntoTheKeySoEquivalentSpellingsAreOneLock() {
        LeaseApi alice = as(writer("alice"));
        Lease byHost = alice.acquire(AcquireRequest.of(LeaseKey.of(new Target("host", "10.0.0.1"), "scanner"), "h", 30))
                .value();
        assertThat(byHost.target().type()).isEqualTo("ip");
        assertThat(byHost.key()).isEqualTo(tenant + "/default/ip:10.0.0.1/scanner");
        assertRefused(alice.acquire(AcquireRequest.of(LeaseKey.of(new Target("ip", "[::ffff:10.0.0.1]"), "scanner"),
                "h", 30)), 409, "LEASE_HELD");

        Lease idn = alice.acquire(AcquireRequest.of(LeaseKey.of(new Target("host", "BÜCHER.de."), "crawler"), "h", 30))
                .value();
        assertThat(idn.target().value()).isEqualTo("xn--bcher-kva.de");
        assertThat(alice.current(LeaseKey.of(new Target("host", "xn--bcher-kva.de"), "crawler")).value().leaseId())
                .isEqualTo(idn.leaseId());

        Lease url = alice.acquire(AcquireRequest.of(LeaseKey.of(new Target("url",
                "http://Example.COM:80/a/./b/../c%7e?x=1#frag"), "fetcher"), "h", 30)).value();
        assertThat(url.target().value()).isEqualTo("http://example.com/a/c~?x=1");
        assertThat(url.key()).isEqualTo(tenant + "/default/url:http%3A%2F%2Fexample.com%2Fa%2Fc~%3Fx%3D1/fetcher");
        assertThat(alice.list(new ListQuery(null, null, "host", "10.0.0.1", null, null, null, null, null)).value()
                .items()).extracting(Lease::leaseId).containsExactly(byHost.leaseId());

        Problem credentials = alice.acquire(AcquireRequest.of(LeaseKey.of(new Target("url",
                "https://user:secret@example.com/"), "fetcher"), "h", 30)).problem();
        assertThat(credentials.status()).isEqualTo(400);
        assertThat(credentials.errors().get(0).field()).isEqualTo("target.value");
        assertThat(credentials.body()).doesNotContain("secret");
    }

    @Test
    void renewExtendsFromNowKeepsTokenAndNeverPassesMaxExpiresAt() {
        LeaseApi alice = as(writer("alice"));
        Lease lease = alice.acquire(AcquireRequest.of(key("renew-me", "job"), "h", 10).withMaxLifetimeSeconds(20))
                .value();

        Lease renewed = alice.renew(lease.leaseId(), lease.fencingToken(), 15).value();
        assertThat(renewed.fencingToken()).isEqualTo(lease.fencingToken());
        assertThat(renewed.ttlSeconds()).isEqualTo(15);
        Instant expected = renewed.renewedAt().plusSeconds(15).isAfter(renewed.maxExpiresAt())
                ? renewed.maxExpiresAt() : renewed.renewedAt().plusSeconds(15);
        assertThat(renewed.expiresAt()).isEqualTo(expected);

        Lease capped = alice.renew(lease.leaseId(), lease.fencingToken(), 3600).value();
        assertThat(capped.expiresAt()).isEqualTo(lease.maxExpiresAt());
    }

    @Test
    void renewWithoutTtlKeepsTheLeasesTtl() {
        LeaseApi alice = as(writer("alice"));
        Lease lease = acquire(alice, "keep-ttl", "job", "h", 40).value();
        Lease renewed = alice.renew(lease.leaseId(), lease.fencingToken(), null).value();
        assertThat(renewed.ttlSeconds()).isEqualTo(40);
        assertThat(renewed.expiresAt()).isEqualTo(renewed.renewedAt().plusSeconds(40));
    }

    @Test
    void renewAndReleaseOfAnUnknownLeaseAnswer404() {
        LeaseApi alice = as(writer("alice"));
        UUID unknown = UUID.randomUUID();
        assertRefused(alice.renew(unknown, 1, null), 404, "LEASE_NOT_FOUND");
        assertRefused(alice.release(unknown, 1), 404, "LEASE_NOT_FOUND");
        assertRefused(alice.inspect(unknown), 404, "LEASE_NOT_FOUND");
    }

    @Test
    void renewOrReleaseWithAnotherTokenAnswers409FencingTokenMismatch() {
        LeaseApi alice = as(writer("alice"));
        Lease lease = acquire(alice, "fenced", "job", "h", 30).value();
        long stale = lease.fencingToken() - 1;

        assertRefused(alice.renew(lease.leaseId(), stale, null), 409, "FENCING_TOKEN_MISMATCH");
        assertRefused(alice.release(lease.leaseId(), stale), 409, "FENCING_TOKEN_MISMATCH");
        assertThat(alice.inspect(lease.leaseId()).value().state()).isEqualTo("active");
    }

    @Test
    void releaseFreesTheKeyAndARepeatByTheOwnerAnswers200Again() {
        LeaseApi alice = as(writer("alice"));
        Lease lease = acquire(alice, "rel", "job", "h", 30).value();

        Lease released = alice.release(lease.leaseId(), lease.fencingToken()).value();
        assertThat(released.state()).isEqualTo("released");
        assertThat(released.endedAt()).isNotNull();
        assertThat(released.remainingMs()).isZero();
        assertThat(alice.release(lease.leaseId(), lease.fencingToken()).value().state()).isEqualTo("released");
        assertThat(eventTypes(lease.leaseId().toString())).containsExactly("ACQUIRED", "RELEASED");

        assertRefused(alice.renew(lease.leaseId(), lease.fencingToken(), null), 410, "LEASE_RELEASED");

        Lease next = acquire(as(writer("bob")), "rel", "job", "h2", 30).value();
        assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
    }

    @Test
    void revokeEndsTheLeaseFreesTheKeyAndTheHolderGets410LeaseRevoked() {
        LeaseApi alice = as(writer("alice"));
        LeaseApi root = as(admin("root"));
        Lease lease = acquire(alice, "rev", "job", "h", 30).value();

        Lease revoked = root.revoke(lease.leaseId(), "stuck job").value();
        assertThat(revoked.state()).isEqualTo("revoked");
        assertThat(revoked.endReason()).isEqualTo("stuck job");

        assertRefused(alice.renew(lease.leaseId(), lease.fencingToken(), null), 410, "LEASE_REVOKED");
        assertRefused(alice.release(lease.leaseId(), lease.fencingToken()), 410, "LEASE_REVOKED");
        acquire(as(writer("bob")), "rev", "job", "h", 30).value();

        assertRefused(root.revoke(lease.leaseId(), "again"), 409, "LEASE_NOT_ACTIVE");
        assertRefused(root.revoke(UUID.randomUUID(), "x"), 404, "LEASE_NOT_FOUND");
        assertRefused(root.revoke(lease.leaseId(), ""), 400, "VALIDATION_FAILED");
        assertRefused(root.revoke(lease.leaseId(), "r".repeat(513)), 400, "VALIDATION_FAILED");
    }

    @Test
    void inspectCurrentAndHistory() {
        LeaseApi alice = as(writer("alice"));
        Lease lease = acquire(alice, "repo/main", "indexer", "h", 30).value();

        assertThat(as(reader("someone-else")).inspect(lease.leaseId()).value().leaseId()).isEqualTo(lease.leaseId());
        assertThat(alice.current(key("repo/main", "INDEXER")).value().leaseId()).isEqualTo(lease.leaseId());
        assertRefused(alice.current(key("repo/main", "indexer").withOperation("x")), 404, "NO_ACTIVE_LEASE");
        assertRefused(alice.current(LeaseKey.of(new Target("dns", "x"), "indexer")), 400, "VALIDATION_FAILED");

        alice.renew(lease.leaseId(), lease.fencingToken(), null).value();
        alice.release(lease.leaseId(), lease.fencingToken()).value();
        List<LeaseEvent> events = alice.history(lease.leaseId()).value();
        assertThat(events).extracting(LeaseEvent::type).containsExactly("ACQUIRED", "RENEWED", "RELEASED");
        assertThat(events.get(0).fromState()).isNull();
        assertThat(events.get(0).toState()).isEqualTo("active");
        LeaseEvent released = events.get(2);
        assertThat(released.fromState()).isEqualTo("active");
        assertThat(released.toState()).isEqualTo("released");
        assertThat(released.leaseId()).isEqualTo(lease.leaseId());
        assertThat(released.principal()).isEqualTo("alice");
        assertThat(released.fencingToken()).isEqualTo(lease.fencingToken());
        assertThat(released.eventId()).isGreaterThan(events.get(1).eventId());
        assertThat(released.at()).isAfterOrEqualTo(lease.acquiredAt());
        assertThat(released.traceId()).isNotBlank();
        assertThat(released.details()).isNotNull();
        assertRefused(alice.history(UUID.randomUUID()), 404, "LEASE_NOT_FOUND");
    }

    @Test
    void historyPagesOldestFirstFollowingNextCursorUntilItIsNullOnTheLastPage() {
        LeaseApi alice = as(writer("alice"));
        Lease lease = acquire(alice, "paged-history", "pager", "h", 30).value();
        for (int i = 0; i < 3; i++) {
            alice.renew(lease.leaseId(), lease.fencingToken(), null).value();
        }
        alice.release(lease.leaseId(), lease.fencingToken()).value();

        EventPage page1 = alice.historyPage(lease.leaseId(), 2, null).value();
        EventPage page2 = alice.historyPage(lease.leaseId(), 2, page1.nextCursor()).value();
        EventPage page3 = alice.historyPage(lease.leaseId(), 2, page2.nextCursor()).value();
        assertThat(page1.items()).extracting(LeaseEvent::type).containsExactly("ACQUIRED", "RENEWED");
        assertThat(page2.items()).extracting(LeaseEvent::type).containsExactly("RENEWED", "RENEWED");
        assertThat(page3.items()).extracting(LeaseEvent::type).containsExactly("RELEASED");
        assertThat(page1.nextCursor()).isNotNull();
        assertThat(page2.nextCursor()).isNotNull().isNotEqualTo(page1.nextCursor());
        assertThat(page3.nextCursor()).isNull();
        List<LeaseEvent> paged = new ArrayList<>(page1.items());
        paged.addAll(page2.items());
        paged.addAll(page3.items());
        assertThat(paged).extracting(LeaseEvent::eventId).isSorted().doesNotHaveDuplicates();
        assertThat(paged).isEqualTo(alice.history(lease.leaseId()).value());

        // A page that ends exactly at the last event is the last page; absent, limit is 100.
        assertThat(alice.historyPage(lease.leaseId(), 5, null).value().nextCursor()).isNull();
        EventPage whole = alice.historyPage(lease.leaseId(), null, null).value();
        assertThat(whole.items()).isEqualTo(paged);
        assertThat(whole.nextCursor()).isNull();

        assertRefused(alice.historyPage(UUID.randomUUID(), 2, null), 404, "LEASE_NOT_FOUND");
        assertRefused(as(TestTokens.token("alice", "elsewhere-" + tenant, TestTokens.READ))
                .historyPage(lease.leaseId(), 2, null), 404, "LEASE_NOT_FOUND");
    }

    @Test
    void aHistoryPageWithABadLimitOrCursorAnswers400NamingTheField() {
        LeaseApi alice = as(writer("alice"));
        Lease lease = acquire(alice, "bad-pages", "pager", "h", 30).value();
        acquire(alice, "bad-pages-2", "pager", "h", 30).value();
        String listCursor = alice.list(ListQuery.active().withLimit(1)).value().nextCursor();
        assertThat(listCursor).isNotNull();

        // The field at fault, and the answer to a page asked with it.
        List<Map.Entry<String, LeaseApi.Outcome<EventPage>>> invalid = List.of(
                Map.entry("limit", alice.historyPage(lease.leaseId(), 0, null)),
                Map.entry("limit", alice.historyPage(lease.leaseId(), 1001, null)),
                Map.entry("cursor", alice.historyPage(lease.leaseId(), 2, "not-a-cursor")),
                Map.entry("cursor", alice.historyPage(lease.leaseId(), 2, listCursor)));
        invalid.forEach(entry -> {
            String field = entry.getKey();
            Problem problem = entry.getValue().problem();
            assertThat(problem.status()).as(problem.body()).isEqualTo(400);
            assertThat(problem.code()).as(problem.body()).isEqualTo("VALIDATION_FAILED");
            assertThat(problem.errors()).extracting(Problem.FieldError::field).as(problem.body()).containsExactly(field);
        });
    }

    @Test
    void aWatchAnswersAnEndedLeaseAsItIsAndAnActiveOneAtItsDeadline() {
        LeaseApi alice = as(writer("alice"));
        Lease active = acquire(alice, "watched", "job", "h", 30).value();
        Lease atDeadline = alice.watch(active.leaseId(), 1).value();
        assertThat(atDeadline.state()).isEqualTo("active");
        assertThat(atDeadline.serverTime()).isAfterOrEqualTo(active.serverTime().plusSeconds(1));

        alice.release(active.leaseId(), active.fencingToken()).value();
        Lease ended = alice.watch(active.leaseId(), 30).value();
        assertThat(ended.state()).isEqualTo("released");
        assertThat(ended.leaseId()).isEqualTo(active.leaseId());

        assertRefused(alice.watch(active.leaseId(), 31), 400, "VALIDATION_FAILED");
        assertRefused(alice.watch(UUID.randomUUID(), 1), 404, "LEASE_NOT_FOUND");
    }

    @Test
    void listFiltersByStateAndKeyPartsAndPagesWithACursor() {
        LeaseApi alice = as(writer("alice"));
        for (int i = 0; i < 5; i++) {
            acquire(alice, "page-" + i, "pager", "h", 30).value();
        }
        Lease gone = acquire(alice, "gone", "pager", "h", 30).value();
        alice.release(gone.leaseId(), gone.fencingToken()).value();
        acquire(as(writer("bob")), "other", "other-actor", "bob-pod", 30).value();

        ListQuery pager = ListQuery.active().withActor("pager").withLimit(2);
        LeasePage page1 = alice.list(pager).value();
        assertThat(page1.items()).hasSize(2);
        LeasePage page2 = alice.list(pager.withCursor(page1.nextCursor())).value();
        LeasePage page3 = alice.list(pager.withCursor(page2.nextCursor())).value();
        assertThat(page3.items()).hasSize(1);
        assertThat(page3.nextCursor()).isNull();
        assertThat(page2.items().get(0).fencingToken()).isLessThan(page1.items().get(1).fencingToken());

        assertThat(alice.list(ListQuery.active()).value().items()).hasSize(6);
        assertThat(alice.list(ListQuery.active().withState("any")).value().items()).hasSize(7);
        assertThat(alice.list(ListQuery.active().withState("released")).value().items()).extracting(Lease::leaseId)
                .containsExactly(gone.leaseId());
        assertThat(alice.list(new ListQuery(null, null, null, null, "bob", null, null, null, null)).value().items())
                .extracting(Lease::holder).containsExactly("bob-pod");
        assertThat(alice.list(ListQuery.active().withHolder("bob-pod")).value().items()).hasSize(1);
        assertThat(alice.list(new ListQuery(null, null, "opaque", "page-3", null, null, null, null, null)).value()
                .items()).hasSize(1);
        assertThat(alice.list(new ListQuery("default", "other-actor", null, null, null, null, null, null, null))
                .value().items()).hasSize(1);

        Map<String, ListQuery> invalid = new LinkedHashMap<>();
        invalid.put("state=bogus", ListQuery.active().withState("bogus"));
        invalid.put("limit=0", ListQuery.active().withLimit(0));
        invalid.put("limit=1001", ListQuery.active().withLimit(1001));
        invalid.put("cursor=not-a-cursor", ListQuery.active().withCursor("not-a-cursor"));
        invalid.put("target=x", new ListQuery(null, null, null, "x", null, null, null, null, null));
        invalid.put("targetType=nope", new ListQuery(null, null, "nope", null, null, null, null, null, null));
        invalid.put("actor=-bad", ListQuery.active().withActor("-bad"));
        invalid.put("holder=%00", ListQuery.active().withHolder("\u0000"));
        invalid.put("owner=a%0Ab", new ListQuery(null, null, null, null, "a\nb", null, null, null, null));
        invalid.forEach((query, list) -> {
            Problem problem = alice.list(list).problem();
            assertThat(problem.status()).as(query).isEqualTo(400);
            assertThat(problem.code()).as(query).isEqualTo("VALIDATION_FAILED");
            assertThat(problem.errors()).as(query).isNotEmpty();
            assertThat(problem.errors().get(0).field()).as(query).isNotBlank();
        });
    }

    @Test
    void invalidAcquireRequestsAnswer400ValidationFailedNamingEachFieldAndChangeNothing() {
        LeaseApi alice = as(writer("alice"));
        Problem problem = alice.acquire(AcquireRequest.of(new LeaseKey("bad program", Target.opaque("   "), "_bad", null),
                "", 0)).problem();
        assertThat(problem.status()).isEqualTo(400);
        assertThat(problem.code()).isEqualTo("VALIDATION_FAILED");
        assertThat(problem.errors()).extracting(Problem.FieldError::field)
                .containsExactlyInAnyOrder("target.value", "actor", "holder", "ttlSeconds", "program");
        assertThat(problem.errors()).allSatisfy(e -> assertThat(e.message()).isNotBlank());

        AcquireRequest valid = AcquireRequest.of(key("x", "a"), "h", 30);
        Map<String, AcquireRequest> cases = new LinkedHashMap<>();
        cases.put("unknown type", AcquireRequest.of(LeaseKey.of(new Target("dns", "x"), "a"), "h", 30));
        cases.put("ttl too large", AcquireRequest.of(key("x", "a"), "h", 3601));
        cases.put("metadata too big", valid.withMetadata(Map.of("blob", "x".repeat(9000))));
        cases.put("lifetime below ttl", valid.withMaxLifetimeSeconds(10));
        cases.put("lifetime over cap", valid.withMaxLifetimeSeconds(604801));
        cases.put("control character", AcquireRequest.of(key("a\u0007b", "a"), "h", 30));
        cases.put("value too long", AcquireRequest.of(key("v".repeat(513), "a"), "h", 30));
        cases.put("holder too long", AcquireRequest.of(key("x", "a"), "h".repeat(129), 30));
        cases.put("NUL in metadata key", valid.withMetadata(Map.of("a\u0000", 1)));
        cases.put("NUL in metadata", valid.withMetadata(Map.of("k", "a\u0000b")));
        cases.put("metadata too deep", valid.withMetadata(nested(17)));
        long[] rowsBefore = rowCounts();
        cases.forEach((name, request) -> {
            Problem refused = alice.acquire(request).problem();
            assertThat(refused.status()).as(name).isEqualTo(400);
            assertThat(refused.code()).as(name).isEqualTo("VALIDATION_FAILED");
        });
        assertThat(rowCounts()).as("rows after rejected requests").isEqualTo(rowsBefore);

        Lease lease = acquire(alice, "valid", "a", "h", 30).value();
        assertRefused(alice.renew(lease.leaseId(), lease.fencingToken(), 0), 400, "VALIDATION_FAILED");
    }

    /** {"a": {"a": … 1 …}} with {@code depth} objects. */
    private static Map<String, Object> nested(int depth) {
        Object value = 1;
        for (int i = 0; i < depth; i++) {
            value = Map.of("a", value);
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> outer = (Map<String, Object>) value;
        return outer;
    }

    @Test
    void aBodyOver64KibAnswers413AndChangesNothing() {
        long[] rowsBefore = rowCounts();
        assertRefused(as(writer("alice")).acquire(AcquireRequest.of(key("x", "a"), "h", 30).withJobId("j".repeat(70_000))),
                413, "REQUEST_TOO_LARGE");
        assertThat(rowCounts()).isEqualTo(rowsBefore);
    }

    /** Keys, leases and events: what a refused request must leave as it was. */
    protected long[] rowCounts() {
        return new long[] {
                jdbc.sql("SELECT count(*) FROM lease_key").query(Long.class).single(),
                jdbc.sql("SELECT count(*) FROM lease").query(Long.class).single(),
                jdbc.sql("SELECT count(*) FROM lease_event").query(Long.class).single()};
    }
}
