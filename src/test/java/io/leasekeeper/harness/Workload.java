package io.leasekeeper.harness;

import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.TestTokens;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.core.ConditionTimeoutException;
import tools.jackson.databind.json.JsonMapper;

/**
 * Clients looping over a few hot keys against one or more service instances: acquire (with an
 * Idempotency-Key), work on the fenced register, release. Half the clients acquire with {@code waitSeconds}
 * (the service waits for a busy key). A quarter renew while working and watch their own lease meanwhile
 * (the watch must end, not active, once they release), a quarter pause past their TTL before writing
 * (waited out against the database's clock, and until a newer holder has written the register, at most
 * 10 s), a quarter retry their acquire as if its response was lost. Every request carries an Idempotency-Key, and a client whose instance is
 * unreachable or answers 503 retries the same request on the next instance.
 */
final class Workload {

    /**
     * What the clients saw: outcomes by name, violations found on the spot, and the moments
     * ({@link System#nanoTime()}) at which an instance answered 503 or could not be reached, for the
     * harness to set against its fault windows.
     */
    record Summary(Map<String, Long> outcomes, List<String> violations, List<Long> unavailableAt,
                   List<Long> unreachableAt) {
        long count(String outcome) {
            return outcomes.getOrDefault(outcome, 0L);
        }
    }

    static final List<String> KEYS = List.of("hot-a", "hot-b", "hot-c");
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final int ATTEMPTS = 40;
    private static final Duration RETRY_PAUSE = Duration.ofMillis(250);
    private static final Duration HELD_PAUSE = Duration.ofMillis(100);
    private static final int WAIT_SECONDS = 3;
    private static final int WATCH_SECONDS = 10;

    private final List<Integer> ports;
    private final FencedRegister register;
    private final String tenant;
    private final Map<String, AtomicLong> outcomes = new ConcurrentHashMap<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final List<Long> unavailableAt = new CopyOnWriteArrayList<>();
    private final List<Long> unreachableAt = new CopyOnWriteArrayList<>();
    private final AtomicLong grants = new AtomicLong();
    private volatile boolean stopping;

    Workload(List<Integer> ports, FencedRegister register, String tenant) {
        this.ports = ports;
        this.register = register;
        this.tenant = tenant;
    }

    /** Leases granted so far: the workload's progress, by which the harness paces its faults. */
    long grants() {
        return grants.get();
    }

    /** Clients finish the iteration they are in and stop; {@link #run} then returns. */
    void stop() {
        stopping = true;
    }

    /** Runs until every client has done {@code iterations} iterations or {@link #stop()} is called. */
    Summary run(int clients, int iterations) throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        try (ExecutorService pool = Executors.newFixedThreadPool(clients)) {
            List<Future<?>> running = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                int client = c;
                running.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < iterations && !stopping; i++) {
                        iteration(client, i);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : running) {
                f.get();
            }
        }
        Map<String, Long> counts = new TreeMap<>();
        outcomes.forEach((k, v) -> counts.put(k, v.get()));
        return new Summary(counts, List.copyOf(violations), List.copyOf(unavailableAt), List.copyOf(unreachableAt));
    }

    private void iteration(int client, int iteration) {
        String subject = "client-" + client;
        String token = TestTokens.token(subject, tenant, TestTokens.WRITE);
        String key = KEYS.get((client + iteration) % KEYS.size());
        int behaviour = (client + iteration) % 4;   // 0 plain, 1 renews, 2 pauses past its TTL, 3 retries its acquire
        int ttl = behaviour == 2 ? 1 : 30;          // 30 s: no stall of a loaded machine lets a working lease lapse
        String id = subject + "-" + iteration;
        boolean waits = client % 2 == 1;
        Map<String, Object> request = new HashMap<>(Api.acquireBody(key, "worker", subject, ttl));
        if (waits) {
            request.put("waitSeconds", WAIT_SECONDS);
        }
        String acquireBody = JSON.writeValueAsString(request);
        Api.Response acquired = call(client, token, "/v1/leases", acquireBody, id + "-acquire");
        if (acquired == null) {
            return;
        }
        if (acquired.status() == 409) {
            count(waits ? "held after waiting" : "held");
            if (!waits) {
                pause(HELD_PAUSE); // a polite client does not spin on a held key
            }
            return;
        }
        if (acquired.status() != 201) {
            violations.add(subject + " acquire answered " + acquired.status() + " " + acquired.raw());
            return;
        }
        count(waits ? "acquired by a waiting acquire" : "acquired");
        grants.incrementAndGet();
        String leaseId = acquired.body().get("leaseId").asString();
        long fencingToken = acquired.body().get("fencingToken").asLong();
        String tokenBody = "{\"fencingToken\":" + fencingToken + "}";

        CompletableFuture<Api.Response> watch = null;
        long watchSent = System.nanoTime();
        if (behaviour == 1) {
            watch = CompletableFuture.supplyAsync(() -> get(client, token, "/v1/leases/" + leaseId + "?waitSeconds="
                    + WATCH_SECONDS), Thread::startVirtualThread);
        }
        switch (behaviour) {
            case 1 -> expect(call(client, token, "/v1/leases/" + leaseId + "/renew", tokenBody, id + "-renew"), 200, "renewed");
            case 2 -> {
                // A stop-the-world pause: the lease lapses (by the database's clock) while the client is
                // frozen, and the world moves on (a newer holder writes) before it wakes and writes.
                await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).ignoreExceptions().until(() ->
                        "expired".equals(get(client, token, "/v1/leases/" + leaseId).body().get("state").asString()));
                count("paused past TTL");
                try {
                    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                            .until(() -> register.lastToken(key) > fencingToken);
                } catch (ConditionTimeoutException e) {
                    count("paused past TTL, no newer holder wrote within 10 s");
                }
            }
            case 3 -> {
                Api.Response replay = call(client, token, "/v1/leases", acquireBody, id + "-acquire");
                if (replay == null || replay.status() != 201 || !leaseId.equals(replay.body().get("leaseId").asString())) {
                    violations.add(subject + " retried acquire made another answer: "
                            + (replay == null ? "none" : replay.status() + " " + replay.raw()));
                } else {
                    count("acquire replayed");
                }
            }
            default -> { }
        }
        boolean written = register.write(key, fencingToken, subject, subject + "#" + iteration, behaviour == 2);
        count(written ? "register write accepted" : "register write rejected");
        Api.Response released = call(client, token, "/v1/leases/" + leaseId + "/release", tokenBody, id + "-release");
        expect(released, behaviour == 2 ? 410 : 200, behaviour == 2 ? "release after pause refused" : "released");
        if (watch != null) {
            watchEnded(subject, watch, watchSent);
        }
    }

    /** A watch of a lease its holder has released answers it not active, unless it reached its deadline first. */
    private void watchEnded(String subject, CompletableFuture<Api.Response> watch, long sentNanos) {
        Api.Response answer = watch.orTimeout(WATCH_SECONDS + 30, TimeUnit.SECONDS).join();
        if (answer == null) {
            return; // gave up after its retries: already a violation
        }
        boolean active = "active".equals(answer.body().path("state").asString(""));
        if (!active) {
            count("watch ended by release");
        } else if (System.nanoTime() - sentNanos >= Duration.ofSeconds(WATCH_SECONDS).toNanos()) {
            count("watch reached its deadline");
        } else {
            violations.add(subject + " watch answered an active lease before its deadline: " + answer.raw());
        }
    }

    /** POST with an Idempotency-Key; on an unreachable instance or a 503, the same request on the next one. */
    private Api.Response call(int client, String token, String path, String body, String idempotencyKey) {
        return withFailover(client, port -> new Api(port).send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + path))
                .header("Content-Type", "application/json").header("Idempotency-Key", idempotencyKey)
                .POST(HttpRequest.BodyPublishers.ofString(body)), token));
    }

    private Api.Response get(int client, String token, String path) {
        return withFailover(client, port -> new Api(port).get(path, token));
    }

    private Api.Response withFailover(int client, java.util.function.IntFunction<Api.Response> send) {
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            int port = ports.get((client + attempt) % ports.size());
            try {
                Api.Response response = send.apply(port);
                if (response.status() == 503) {
                    unavailableAt.add(System.nanoTime());
                    count("503 retried");
                    backOff();
                    continue;
                }
                if (response.status() >= 500) {
                    violations.add("a " + response.status() + " other than 503: " + response.raw());
                }
                return response;
            } catch (UncheckedIOException e) {
                unreachableAt.add(System.nanoTime());
                count("unreachable, retried");
                backOff();
            }
        }
        violations.add("client-" + client + " gave up after " + ATTEMPTS + " attempts");
        return null;
    }

    /** Lets a restarting instance or database come back; retries are bounded by ATTEMPTS. */
    private static void backOff() {
        pause(RETRY_PAUSE);
    }

    /** Client pacing against real faults and contention; no event of the run is ordered by it. */
    private static void pause(Duration duration) {
        java.util.concurrent.locks.LockSupport.parkNanos(duration.toNanos());
    }

    private void expect(Api.Response response, int status, String outcome) {
        if (response != null && response.status() == status) {
            count(outcome);
        } else {
            violations.add(outcome + ": expected " + status + " but got "
                    + (response == null ? "no answer" : response.status() + " " + response.raw()));
        }
    }

    private void count(String outcome) {
        outcomes.computeIfAbsent(outcome, o -> new AtomicLong()).incrementAndGet();
    }

}
