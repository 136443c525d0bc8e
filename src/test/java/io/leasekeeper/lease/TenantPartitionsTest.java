package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.AutoExplain;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.RecordedStatements;
import io.leasekeeper.support.TestDatabase;
import io.leasekeeper.sweeper.LeaseSweeper;
import io.leasekeeper.wait.KeyWaiters;
import java.net.URI;
import java.net.http.HttpRequest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The schema sharded by tenant, as one PostgreSQL can show it: every table keyed by tenant hash-partitioned by tenant
 * (TestDatabase.partitionedByTenant), the service running on it, and every statement the service sends for one
 * tenant's requests (each operation of the contract, a waiting acquire handed the key, a watch, an idempotent
 * replay, an acquire that records an expiry, the sweeper) explained with the values it was sent: each reaches exactly
 * one partition of each table partitioned by tenant. Statements across tenants say so in their text ("-- Across
 * tenants"), and are housekeeping, never a request's. Runs in the build's second run of the lease tests, the one on
 * this schema (the surefire execution partitioned-by-tenant).
 */
@EnabledIfSystemProperty(named = "leasekeeper.test.schema", matches = TestDatabase.PARTITIONED_BY_TENANT)
@Import(TenantPartitionsTest.Recording.class)
// The service's sessions send the plan of every statement they run with its answer, those inside its functions too.
@TestPropertySource(properties = "spring.datasource.hikari.connection-init-sql=" + AutoExplain.SESSION)
class TenantPartitionsTest extends IntegrationTest {

    private static final RecordedStatements RECORDED = new RecordedStatements();
    private static final String ACROSS_TENANTS = "-- Across tenants";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TestConfiguration
    static class Recording {
        @Bean
        static BeanPostProcessor recordedStatements() {
            return RECORDED.wrapping();
        }
    }

    @Autowired
    KeyWaiters waiters;

    @Autowired
    LeaseSweeper sweeper;

    @Test
    void everyStatementOfATenantsRequestsReachesOnePartitionOfEachTableShardedByTenant() throws Exception {
        assertThat(jdbc.sql("SELECT count(*) FROM pg_partitioned_table WHERE partstrat = 'h'").query(Long.class).single())
                .as("tables hash-partitioned by tenant").isEqualTo(4);

        RECORDED.start();
        aTenantsDay();
        List<RecordedStatements.Executed> executed = RECORDED.stop();

        Map<String, String> partitionOf = partitionsByTenant();
        Map<String, RecordedStatements.Executed> distinct = new LinkedHashMap<>();
        List<RecordedStatements.Executed> calls = new ArrayList<>();
        executed.forEach(e -> {
            if (CALL.matcher(e.sql()).find()) {
                calls.add(e); // each call: the statements a function runs depend on what it finds
            } else {
                distinct.putIfAbsent(e.sql(), e);
            }
        });
        Map<String, JsonNode> plans = new LinkedHashMap<>();
        int acrossTenants = 0;
        TestDatabase.Connection database = TestDatabase.connection();
        try (Connection db = DriverManager.getConnection(database.url(), database.username(), database.password())) {
            for (RecordedStatements.Executed statement : distinct.values()) {
                if (statement.sql().contains(ACROSS_TENANTS)) {
                    acrossTenants++;
                } else if (explainable(statement.sql())) {
                    plans.put(statement.sql(), plan(db, statement));
                }
            }
        }
        for (int i = 0; i < calls.size(); i++) {
            java.util.regex.Matcher function = CALL.matcher(calls.get(i).sql());
            function.find();
            plans.put("call " + i + " of " + function.group(1), nestedPlans(calls.get(i), function.group(1)));
        }
        assertThat(calls.stream().map(c -> CALL.matcher(c.sql()).results().findFirst().orElseThrow().group(1)))
                .as("the functions called").contains("lease_acquire", "lease_renew", "lease_end", "lease_expire_due");
        List<String> reachingMore = new ArrayList<>();
        Set<String> tablesReached = new LinkedHashSet<>();
        plans.forEach((statement, plan) -> {
            Map<String, Set<String>> reached = new TreeMap<>();
            for (String relation : relations(plan)) {
                String table = partitionOf.get(relation);
                if (table != null) {
                    reached.computeIfAbsent(table, t -> new LinkedHashSet<>()).add(relation);
                }
            }
            tablesReached.addAll(reached.keySet());
            reached.forEach((table, partitions) -> {
                if (partitions.size() != 1) {
                    reachingMore.add(table + " " + partitions + " in:\n" + statement + "\n" + plan);
                }
            });
        });
        int explained = plans.size();
        assertThat(reachingMore).as("statements reaching several partitions of a table sharded by tenant").isEmpty();
        assertThat(explained).as("statements explained").isGreaterThanOrEqualTo(25);
        assertThat(tablesReached).containsExactlyInAnyOrder("lease", "lease_key", "lease_waiter", "idempotency_record");
        assertThat(acrossTenants).as("the sweeper's search for tenants with due leases").isGreaterThanOrEqualTo(1);
    }

    /**
     * Each operation of the contract for one tenant, with the paths that write differently: an idempotent acquire and
     * its replay, a busy key, a waiting acquire queued and handed the key at a release, a watch ended by a revoke, an
     * acquire that records its key's expired lease, renewals, the list with each filter and a cursor, the history, the
     * current lease of a key, and a sweep.
     */
    private void aTenantsDay() throws Exception {
        String alice = writer("alice");
        String bob = writer("bob");
        Api.Response first = idempotent(alice, "day-1", Api.acquireBody("k", "job", "a", 60));
        assertThat(first.status()).isEqualTo(201);
        assertThat(idempotent(alice, "day-1", Api.acquireBody("k", "job", "a", 60)).status()).isEqualTo(201);
        assertThat(renew(alice, id(first), token(first)).status()).isEqualTo(200);
        assertThat(acquire(bob, "k", "job", "b", 60).status()).isEqualTo(409);
        Api.Response plain = acquire(alice, "plain", "job", "a", 60); // a key no one waits for: released in one call
        assertThat(release(alice, id(plain), token(plain)).status()).isEqualTo(200);

        ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor();
        try {
            Map<String, Object> waiting = new HashMap<>(Api.acquireBody("k", "job", "b", 60));
            waiting.put("waitSeconds", 20);
            CompletableFuture<Api.Response> waiter = CompletableFuture.supplyAsync(
                    () -> idempotent(bob, "day-2", waiting), clients);
            await().atMost(Duration.ofSeconds(10)).until(() -> waiters.count() == 1);
            assertThat(release(alice, id(first), token(first)).status()).isEqualTo(200);
            Api.Response handed = waiter.get(10, TimeUnit.SECONDS);
            assertThat(handed.status()).isEqualTo(201);

            CompletableFuture<Api.Response> watch = CompletableFuture.supplyAsync(
                    () -> api.get("/v1/leases/" + id(handed) + "?waitSeconds=20", reader("carol")), clients);
            await().atMost(Duration.ofSeconds(10)).until(() -> waiters.count() == 1);
            assertThat(revoke(admin("root"), id(handed), "stuck").status()).isEqualTo(200);
            assertThat(watch.get(10, TimeUnit.SECONDS).body().get("state").asString()).isEqualTo("revoked");
        } finally {
            clients.shutdownNow();
        }

        Api.Response lapsed = acquire(alice, "lapsed", "job", "a", 60);
        backdate(id(lapsed));
        assertThat(acquire(bob, "lapsed", "job", "b", 60).status()).isEqualTo(201);
        Api.Response swept = acquire(alice, "swept", "job", "a", 60);
        backdate(id(swept));
        // Runs, each with its search across tenants, until one reaches this tenant: other test classes leave due
        // leases behind (the sweeper is off in tests), often of more tenants than one run reaches.
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            sweeper.sweepDue();
            return api.get("/v1/leases/" + id(swept), reader("carol")).body().get("state").asString().equals("expired");
        });

        for (String query : List.of("", "?state=expired", "?program=default", "?actor=job", "?owner=alice",
                "?holder=a", "?targetType=opaque&target=k", "?state=expired&limit=1")) {
            Api.Response page = api.get("/v1/leases" + query, reader("carol"));
            assertThat(page.status()).as(query).isEqualTo(200);
            if (query.endsWith("limit=1")) { // the tenant's two expired leases, a page each
                String cursor = page.body().get("nextCursor").asString();
                Api.Response next = api.get("/v1/leases" + query + "&cursor=" + cursor, reader("carol"));
                assertThat(next.status()).isEqualTo(200);
                assertThat(next.body().get("items").size()).isEqualTo(1);
            }
        }
        assertThat(api.get("/v1/leases/" + id(first) + "/events", reader("carol")).body().get("items").size())
                .isEqualTo(3);
        assertThat(api.get("/v1/leases/current?targetType=opaque&target=lapsed&actor=job", reader("carol")).status())
                .isEqualTo(200);
    }

    /** IntegrationTest's backdateExpiry, with the tenant: this test's own statements are recorded too. */
    private void backdate(String leaseId) {
        assertThat(jdbc.sql("""
                UPDATE lease SET expires_at = lease_now() - interval '1 second'
                WHERE tenant = :tenant AND id = CAST(:id AS uuid)
                """).param("tenant", tenant).param("id", leaseId).update()).isEqualTo(1);
    }

    private Api.Response idempotent(String token, String key, Map<String, Object> body) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/leases"))
                .header("Content-Type", "application/json").header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
        return api.send(request, token);
    }

    /** Each partition of a table hash-partitioned by tenant, and that table. */
    private Map<String, String> partitionsByTenant() {
        Map<String, String> partitionOf = new HashMap<>();
        jdbc.sql("""
                SELECT c.relname AS partition, p.relname AS parent
                FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
                JOIN pg_partitioned_table t ON t.partrelid = p.oid
                WHERE t.partstrat = 'h'
                """).query((ResultSet rs) -> {
                    partitionOf.put(rs.getString("partition"), rs.getString("parent"));
                });
        return partitionOf;
    }

    private static boolean explainable(String sql) {
        String start = sql.stripLeading().toUpperCase();
        return start.startsWith("SELECT") || start.startsWith("WITH") || start.startsWith("INSERT")
                || start.startsWith("UPDATE") || start.startsWith("DELETE");
    }

    /** A call of one of the service's transitions (db/migration/R__*.sql), by the function's name. */
    private static final java.util.regex.Pattern CALL = java.util.regex.Pattern.compile(
            "\\b(lease_acquire|lease_leave_queue|lease_renew|lease_end|lease_expire_due)\\(");

    /**
     * The plans of the statements one call of the service's functions ran, as auto_explain sent them with its answer
     * (the service's sessions here log every plan to the client).
     */
    private static JsonNode nestedPlans(RecordedStatements.Executed call, String function) {
        var plans = JSON.createArrayNode();
        AutoExplain.nestedPlans(call.messages(), function).forEach(plan -> plans.add(JSON.readTree(plan)));
        assertThat(plans).as("the statements run by " + function).isNotEmpty();
        return plans;
    }

    /** The plan of the statement as PostgreSQL makes it for the values it was sent (a custom plan). */
    private static JsonNode plan(Connection db, RecordedStatements.Executed statement) throws Exception {
        try (PreparedStatement explain = db.prepareStatement("EXPLAIN (FORMAT JSON) " + statement.sql())) {
            for (int i = 0; i < statement.values().size(); i++) {
                explain.setObject(i + 1, statement.values().get(i));
            }
            try (ResultSet rs = explain.executeQuery()) {
                rs.next();
                return JSON.readTree(rs.getString(1));
            }
        }
    }

    /** Every relation a plan scans or changes. */
    private static List<String> relations(JsonNode node) {
        List<String> found = new ArrayList<>();
        if (node.isObject() && node.has("Relation Name")) {
            found.add(node.get("Relation Name").asString());
        }
        node.forEach(child -> found.addAll(relations(child)));
        return found;
    }

    private static String id(Api.Response lease) {
        return lease.body().get("leaseId").asString();
    }

    private static long token(Api.Response lease) {
        return lease.body().get("fencingToken").asLong();
    }
}
