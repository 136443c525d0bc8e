package io.leasekeeper.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.CuttableProxy;
import io.leasekeeper.support.PrometheusServer;
import io.leasekeeper.support.TestDatabase;
import io.leasekeeper.support.TestTokens;
import io.leasekeeper.sweeper.LeaseSweeper;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The dashboard and the alert rules against a real Prometheus scraping the running service: after a
 * workload that moves every meter (contention, mismatches, revocations, expiry, a database outage),
 * every dashboard query and every alert expression evaluates without error and returns a series, and
 * every alert's condition is met at the moment the test provoked it. Runs where Prometheus is
 * installed; {@code .ci/run} installs it and sets {@code LEASEKEEPER_TEST_REQUIRE_PROMETHEUS}, so CI
 * never skips it.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "leasekeeper.sweeper.enabled=false", "leasekeeper.idempotency.cleanup-enabled=false",
        "leasekeeper.audit.cleanup-enabled=false", "leasekeeper.metrics.gauge-refresh=1s",
        // Partitions of one second, made four ahead every second: an outage of two seconds brings them close to
        // running out (LeasekeeperAuditPartitionsRunningOut).
        "leasekeeper.audit.partition-width=1s", "leasekeeper.audit.partitions-ahead=4",
        "leasekeeper.audit.cleanup-interval=1s",
        "spring.datasource.hikari.maximum-pool-size=4"})
@DirtiesContext
class PrometheusTest {

    static final Path DASHBOARD = Path.of("helm/leasekeeper/files/leasekeeper-dashboard.json");
    static final Path RULES = Path.of("helm/leasekeeper/files/leasekeeper-alerts.yml");
    private static final Pattern LABEL_VALUES = Pattern.compile("label_values\\((.+),\\s*(\\w+)\\)");
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    private static CuttableProxy proxy;

    /** A database of its own: the partitions that other tests' instances made days ahead would never run out. */
    private static final String DATABASE = TestDatabase.newDatabase("prometheus");

    @DynamicPropertySource
    static void throughTheProxy(DynamicPropertyRegistry registry) {
        proxy = CuttableProxy.inFrontOf(DATABASE, registry);
        registry.add("spring.security.oauth2.resourceserver.jwt.public-key-location", TestTokens::publicKeyLocation);
    }

    @AfterAll
    static void closeProxy() throws Exception {
        proxy.close();
        TestDatabase.dropDatabase(DATABASE);
    }

    @LocalServerPort
    int port;

    @LocalManagementPort
    int managementPort;

    @Autowired
    LeaseSweeper sweeper;

    @Autowired
    JdbcClient jdbc;

    private Api api;
    private String tenant;

    @Test
    void everyDashboardQueryAndAlertRuleEvaluatesToSeriesInARealPrometheus() throws Exception {
        Path prometheus = requiredTool("prometheus");
        Path promtool = requiredTool("promtool");
        Process check = new ProcessBuilder(promtool.toString(), "check", "rules", RULES.toString())
                .redirectErrorStream(true).start();
        String checked = new String(check.getInputStream().readAllBytes());
        assertThat(check.waitFor()).as(checked).isZero();
        assertThat(checked).contains("SUCCESS");

        api = new Api(port);
        tenant = "prom-" + UUID.randomUUID().toString().substring(0, 8);
        try (PrometheusServer server = PrometheusServer.start(prometheus, RULES, managementPort)) {
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(250)).untilAsserted(() ->
                    assertThat(server.query("up{job=\"leasekeeper\"} == 1")).hasSize(1));
            Map<String, String> alerts = alertQueries(server);
            assertThat(alerts.keySet()).containsExactlyInAnyOrderElementsOf(alertNames());

            leaseTraffic();
            expectSeries(server, alerts.get("LeasekeeperFencingMismatchSurge"));
            expectSeries(server, alerts.get("LeasekeeperRevocationSurge"));
            heartbeatAnomalies();
            expectSeries(server, alerts.get("LeasekeeperLateRenewals"));
            expectSeries(server, alerts.get("LeasekeeperEagerRenewals"));

            String unswept = leaseLeftPastItsExpiry();
            expectSeries(server, alerts.get("LeasekeeperSweeperLagging"));
            assertThat(sweeper.sweepOnce(tenant)).isPositive();
            assertThat(api.get("/v1/leases/" + unswept, token(TestTokens.READ)).body().get("state").asString())
                    .isEqualTo("expired");

            proxy.cut();
            try {
                requestsDuringTheOutage();
                expectSeries(server, alerts.get("LeasekeeperDatabaseUnavailable"));
                expectSeries(server, alerts.get("LeasekeeperServerErrors"));
                expectSeries(server, alerts.get("LeasekeeperDatabasePoolExhausted"));
                expectSeries(server, alerts.get("LeasekeeperWaitListenerDown"));
                expectSeries(server, alerts.get("LeasekeeperAuditPartitionsRunningOut"));
            } finally {
                proxy.restore();
            }
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(250)).until(() ->
                    acquire("after-outage", token(TestTokens.WRITE)).status() == 201);

            JsonNode dashboard = JsonMapper.builder().build().readTree(Files.readString(DASHBOARD));
            checkVariables(server, dashboard);
            for (JsonNode panel : dashboard.get("panels")) {
                for (JsonNode target : panel.get("targets")) {
                    String promql = grafanaToPromQL(target.get("expr").asString());
                    List<JsonNode> series = expectSeries(server, promql);
                    System.out.printf("panel %-55s %s%n    => %d series, e.g. %s%n", panel.get("title").asString(),
                            promql, series.size(), series.getFirst());
                }
            }
            // Prometheus itself evaluated every rule all along, with no error.
            for (JsonNode group : server.data("/api/v1/rules").get("groups")) {
                for (JsonNode rule : group.get("rules")) {
                    assertThat(rule.get("health").asString()).as(rule.get("name").asString() + ": "
                            + rule.path("lastError").asString("")).isEqualTo("ok");
                }
            }
        }
    }

    /** Ordinary traffic of every operation and outcome, with more mismatches and revocations than the alerts allow. */
    private void leaseTraffic() {
        String alice = TestTokens.token("alice", tenant, TestTokens.WRITE);
        String bob = TestTokens.token("bob", tenant, TestTokens.WRITE);
        String admin = TestTokens.token("root", tenant, TestTokens.ADMIN);
        JsonNode held = acquire("contended", alice).body();
        String heldId = held.get("leaseId").asString();
        long token = held.get("fencingToken").asLong();
        for (int i = 0; i < 3; i++) {
            assertThat(acquire("contended", bob).code()).isEqualTo("LEASE_HELD");
        }
        // A waiting acquire that gives up at its deadline (the wait meters).
        assertThat(api.post("/v1/leases", bob, "{\"target\": {\"type\": \"opaque\", \"value\": \"contended\"},"
                + " \"actor\": \"job\", \"holder\": \"h\", \"ttlSeconds\": 30, \"waitSeconds\": 1}").code())
                .isEqualTo("LEASE_HELD");
        assertThat(api.post("/v1/leases/" + heldId + "/renew", alice, Map.of("fencingToken", token)).status())
                .isEqualTo(200);
        for (int i = 0; i < 15; i++) {
            assertThat(api.post("/v1/leases/" + heldId + "/renew", alice, Map.of("fencingToken", token + 1)).code())
                    .isEqualTo("FENCING_TOKEN_MISMATCH");
        }
        assertThat(api.get("/v1/leases/" + heldId, alice).status()).isEqualTo(200);
        assertThat(api.get("/v1/leases/current?targetType=opaque&target=contended&actor=job", alice).status())
                .isEqualTo(200);
        assertThat(api.get("/v1/leases/" + heldId + "/events", alice).status()).isEqualTo(200);
        assertThat(api.get("/v1/leases?state=any", alice).status()).isEqualTo(200);
        assertThat(api.post("/v1/leases/" + heldId + "/release", alice, Map.of("fencingToken", token)).status())
                .isEqualTo(200);
        assertThat(api.post("/v1/leases", alice, "{\"target\": 42}").code()).isEqualTo("VALIDATION_FAILED");
        assertThat(acquire("anonymous", null).code()).isEqualTo("UNAUTHENTICATED");
        for (int i = 0; i < 2; i++) {
            api.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/leases"))
                    .header("Content-Type", "application/json").header("Idempotency-Key", "prometheus-" + tenant)
                    .POST(HttpRequest.BodyPublishers.ofString("{\"target\": {\"type\": \"opaque\", \"value\": "
                            + "\"replayed\"}, \"actor\": \"job\", \"holder\": \"h\", \"ttlSeconds\": 30}")), alice);
        }
        for (int i = 0; i < 25; i++) {
            String id = acquire("revoked-" + i, alice).body().get("leaseId").asString();
            assertThat(api.post("/v1/admin/leases/" + id + "/revoke", admin, Map.of("reason", "drill")).status())
                    .isEqualTo(200);
        }
        // An acquire that finds the key's lease past its expiry records the expiry (cause "acquire").
        String lapsed = acquire("lapsed", alice).body().get("leaseId").asString();
        backdate(lapsed);
        assertThat(acquire("lapsed", bob).status()).isEqualTo(201);
    }

    /** Renewals at once after the grant (early), and renewals with 28 of their 30 s gone (late, backdated with SQL). */
    private void heartbeatAnomalies() {
        String alice = TestTokens.token("alice", tenant, TestTokens.WRITE);
        JsonNode lease = acquire("heartbeats", alice).body();
        String id = lease.get("leaseId").asString();
        Map<String, Object> token = Map.of("fencingToken", lease.get("fencingToken").asLong());
        for (int i = 0; i < 60; i++) {
            assertThat(api.post("/v1/leases/" + id + "/renew", alice, token).status()).isEqualTo(200);
        }
        for (int i = 0; i < 6; i++) {
            assertThat(jdbc.sql("""
                    UPDATE lease SET renewed_at = lease_now() - interval '28 seconds',
                                     expires_at = lease_now() + interval '2 seconds'
                    WHERE id = CAST(:id AS uuid)
                    """).param("id", id).update()).isEqualTo(1);
            assertThat(api.post("/v1/leases/" + id + "/renew", alice, token).status()).isEqualTo(200);
        }
    }

    /** A lease that expired a minute ago by the database's clock and that no sweeper has marked. */
    private String leaseLeftPastItsExpiry() {
        String id = acquire("unswept", token(TestTokens.WRITE)).body().get("leaseId").asString();
        backdate(id);
        return id;
    }

    /** Every request waits for a connection that cannot be made, then answers 503. */
    private void requestsDuringTheOutage() throws Exception {
        String writer = token(TestTokens.WRITE);
        ExecutorService clients = Executors.newFixedThreadPool(8);
        try {
            List<Future<Api.Response>> answers = new ArrayList<>();
            for (int i = 0; i < 24; i++) {
                String target = "outage-" + i;
                answers.add(clients.submit(() -> acquire(target, writer)));
            }
            for (Future<Api.Response> answer : answers) {
                assertThat(answer.get().code()).isEqualTo("DATABASE_UNAVAILABLE");
            }
        } finally {
            clients.shutdownNow();
        }
    }

    private void backdate(String leaseId) {
        assertThat(jdbc.sql("UPDATE lease SET expires_at = lease_now() - interval '60 seconds' WHERE id = CAST(:id AS uuid)")
                .param("id", leaseId).update()).isEqualTo(1);
    }

    private Api.Response acquire(String target, String token) {
        return api.post("/v1/leases", token, Api.acquireBody(target, "job", "h", 30));
    }

    private String token(List<String> scopes) {
        return TestTokens.token("alice", tenant, scopes);
    }

    /** Polls until the expression returns at least one series (it must never fail to evaluate). */
    private static List<JsonNode> expectSeries(PrometheusServer server, String promql) {
        List<List<JsonNode>> found = new ArrayList<>();
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            List<JsonNode> series = server.query(promql);
            assertThat(series).as(() -> promql + "\n" + server.scrapeHealth()).isNotEmpty();
            found.add(series);
        });
        return found.getLast();
    }

    /** The alert rules as Prometheus loaded them: name to expression. */
    private static Map<String, String> alertQueries(PrometheusServer server) {
        Map<String, String> queries = new LinkedHashMap<>();
        for (JsonNode group : server.data("/api/v1/rules?type=alert").get("groups")) {
            for (JsonNode rule : group.get("rules")) {
                queries.put(rule.get("name").asString(), rule.get("query").asString());
            }
        }
        return queries;
    }

    private static List<String> alertNames() throws Exception {
        Matcher m = Pattern.compile("(?m)^\\s*- alert: (\\S+)").matcher(Files.readString(RULES));
        List<String> names = new ArrayList<>();
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }

    /** Grafana 10+: a datasource variable of type prometheus that every panel uses; query variables that return values. */
    private static void checkVariables(PrometheusServer server, JsonNode dashboard) {
        assertThat(dashboard.get("schemaVersion").asInt()).isGreaterThanOrEqualTo(36);
        List<JsonNode> variables = new ArrayList<>();
        dashboard.get("templating").get("list").forEach(variables::add);
        assertThat(variables).anySatisfy(v -> {
            assertThat(v.get("name").asString()).isEqualTo("datasource");
            assertThat(v.get("type").asString()).isEqualTo("datasource");
            assertThat(v.get("query").asString()).isEqualTo("prometheus");
        });
        for (JsonNode v : variables) {
            if (v.get("type").asString().equals("query")) {
                assertThat(v.get("datasource").get("uid").asString()).isEqualTo("${datasource}");
                Matcher m = LABEL_VALUES.matcher(v.get("query").get("query").asString());
                assertThat(m.matches()).as(v.toString()).isTrue();
                JsonNode values = server.data("/api/v1/label/" + m.group(2) + "/values?match[]="
                        + java.net.URLEncoder.encode(grafanaToPromQL(m.group(1)), java.nio.charset.StandardCharsets.UTF_8));
                assertThat(values).as(v.get("name").asString()).isNotEmpty();
            }
        }
        List<Integer> ids = new ArrayList<>();
        for (JsonNode panel : dashboard.get("panels")) {
            ids.add(panel.get("id").asInt());
            assertThat(panel.get("datasource").get("uid").asString()).isEqualTo("${datasource}");
            assertThat(panel.get("gridPos").get("w").asInt()).isBetween(1, 24);
            assertThat(panel.get("targets")).isNotEmpty().allSatisfy(t ->
                    assertThat(t.get("datasource").get("uid").asString()).isEqualTo("${datasource}"));
        }
        assertThat(ids).doesNotHaveDuplicates();
    }

    /** Grafana's variables as Grafana would fill them in for this service (all instances). */
    static String grafanaToPromQL(String expr) {
        String promql = expr.replace("$__rate_interval", "5m").replace("$application", "leasekeeper")
                .replace("$instance", ".*");
        assertThat(promql).as("a variable left in " + expr).doesNotContain("$");
        return promql;
    }

    private static Path requiredTool(String name) {
        Optional<Path> tool = PrometheusServer.tool(name);
        if (tool.isEmpty()) {
            boolean required = "true".equals(System.getenv("LEASEKEEPER_TEST_REQUIRE_PROMETHEUS"));
            assertThat(required).as(name + " is not on PATH, and LEASEKEEPER_TEST_REQUIRE_PROMETHEUS is true").isFalse();
            Assumptions.abort(name + " is not installed (apt-get install prometheus); skipping");
        }
        return tool.get();
    }
}
