package io.leasekeeper.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.TestDatabase;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * 24 clients loop over three hot keys: acquire (with an Idempotency-Key), work on the fenced register,
 * release. Some renew while working, some pause past their TTL before writing (a stop-the-world pause,
 * waited out against the database's clock), some retry their acquire as if its response was lost.
 * The checker then reads the service's history and the register's log: no violation is allowed.
 * (Several service processes and the fault schedule of issue 4 build on this workload.)
 */
class FencingWorkloadTest extends IntegrationTest {

    static final int CLIENTS = 24;
    static final int ITERATIONS = 8;
    static final List<String> KEYS = List.of("hot-a", "hot-b", "hot-c");
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final Map<String, AtomicLong> outcomes = new ConcurrentHashMap<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();

    @Test
    void noStaleHolderEverCommitsAndTheHistoryHasNoViolation() throws Exception {
        TestDatabase.Connection db = TestDatabase.connection();
        jdbc.sql("SELECT 1").query(Integer.class).single();
        if (jdbc.sql("SELECT count(*) FROM pg_database WHERE datname = 'leasekeeper_register'").query(Long.class).single() == 0) {
            jdbc.sql("CREATE DATABASE leasekeeper_register").update();
        }
        String registerUrl = db.url().replaceFirst("/([^/?]+)(\\?|$)", "/leasekeeper_register$2");
        FencedRegister register = new FencedRegister(registerUrl, db.username(), db.password());

        CountDownLatch start = new CountDownLatch(1);
        try (ExecutorService pool = Executors.newFixedThreadPool(CLIENTS)) {
            List<Future<?>> clients = new ArrayList<>();
            for (int c = 0; c < CLIENTS; c++) {
                int client = c;
                clients.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < ITERATIONS; i++) {
                        iteration(register, client, i);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : clients) {
                f.get();
            }
        }

        List<FencedRegister.Write> writes = register.log();
        violations.addAll(HistoryChecker.check(jdbc, tenant, writes));
        long accepted = writes.stream().filter(FencedRegister.Write::accepted).count();
        System.out.printf("%nFencing workload: %d clients x %d iterations on %d keys%n  outcomes: %s%n"
                        + "  register writes: %d accepted, %d rejected%n  violations: %d %s%n",
                CLIENTS, ITERATIONS, KEYS.size(), new TreeMap<>(outcomes), accepted, writes.size() - accepted,
                violations.size(), violations);

        assertThat(violations).isEmpty();
        assertThat(count("acquired")).isPositive();
        assertThat(count("paused past TTL")).isPositive();
        assertThat(count("acquire replayed")).isPositive();
        assertThat(accepted).isPositive();
    }

    private void iteration(FencedRegister register, int client, int iteration) {
        String subject = "client-" + client;
        String token = writer(subject);
        String key = KEYS.get((client + iteration) % KEYS.size());
        int behaviour = (client + iteration) % 4;   // 0 plain, 1 renews, 2 pauses past its TTL, 3 retries its acquire
        int ttl = behaviour == 2 ? 1 : 30;   // 30 s: no stall of a loaded CI machine lets a working lease lapse
        String idempotencyKey = subject + "-" + iteration;
        Api.Response acquired = acquireWithKey(token, key, subject, ttl, idempotencyKey);
        if (acquired.status() == 409) {
            count("held");
            return;
        }
        if (acquired.status() != 201) {
            violations.add(subject + " acquire answered " + acquired.status() + " " + acquired.raw());
            return;
        }
        count("acquired");
        String leaseId = acquired.body().get("leaseId").asString();
        long fencingToken = acquired.body().get("fencingToken").asLong();

        switch (behaviour) {
            case 1 -> expect(renew(token, leaseId, fencingToken), 200, "renewed");
            case 2 -> {
                // The holder stops the world until the database says its lease is gone, then writes anyway.
                await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100)).until(() ->
                        "expired".equals(api.get("/v1/leases/" + leaseId, token).body().get("state").asString()));
                count("paused past TTL");
            }
            case 3 -> {
                Api.Response replay = acquireWithKey(token, key, subject, ttl, idempotencyKey);
                if (replay.status() != 201 || !"true".equals(replay.header("Idempotent-Replayed"))
                        || !leaseId.equals(replay.body().get("leaseId").asString())) {
                    violations.add(subject + " retried acquire made another answer: " + replay.status() + " " + replay.raw());
                } else {
                    count("acquire replayed");
                }
            }
            default -> { }
        }
        boolean written = register.write(key, fencingToken, subject, subject + "#" + iteration);
        count(written ? "register write accepted" : "register write rejected");
        Api.Response released = release(token, leaseId, fencingToken);
        if (behaviour == 2) {
            expect(released, 410, "release after pause refused");
        } else {
            expect(released, 200, "released");
        }
    }

    private Api.Response acquireWithKey(String token, String key, String holder, int ttl, String idempotencyKey) {
        String body = JSON.writeValueAsString(Api.acquireBody(key, "worker", holder, ttl));
        return api.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/leases"))
                .header("Content-Type", "application/json").header("Idempotency-Key", idempotencyKey)
                .POST(HttpRequest.BodyPublishers.ofString(body)), token);
    }

    private void expect(Api.Response response, int status, String outcome) {
        if (response.status() == status) {
            count(outcome);
        } else {
            JsonNode body = response.body();
            violations.add(outcome + ": expected " + status + " but got " + response.status() + " " + body);
        }
    }

    private long count(String outcome) {
        return outcomes.computeIfAbsent(outcome, o -> new AtomicLong()).incrementAndGet();
    }
}
