package io.leasekeeper.harness;

import static org.awaitility.Awaitility.await;

import io.leasekeeper.client.AcquireRequest;
import io.leasekeeper.client.Lease;
import io.leasekeeper.client.LeaseKey;
import io.leasekeeper.client.LeasekeeperClient;
import io.leasekeeper.client.ProblemException;
import io.leasekeeper.client.ServiceUnavailableException;
import io.leasekeeper.client.Target;
import io.leasekeeper.support.TestTokens;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Clients looping over a few hot keys against one or more service instances, through the client library
 * ({@link LeasekeeperClient}): acquire (with an Idempotency-Key of the workload's own), work on the fenced
 * register, release. Half the clients acquire with {@code waitSeconds} (the service waits for a busy key). A
 * quarter renew while working and watch their own lease meanwhile (the watch must end, not active, once they
 * release), a quarter pause past their TTL before writing (waited out against the database's clock, and until a
 * newer holder has written the register, at most 10 s), a quarter retry their acquire as if its response was
 * lost. Each client has one library client per instance, making one attempt per call: when an instance is
 * unreachable or answers 503, the workload sends the same request, with the same Idempotency-Key, to the next.
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
    /** One JDK client under every library client, as one connection pool per process. */
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    /** An attempt's limit beyond a waiting acquire's or a watch's wait: then the next instance is tried. */
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(20);
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
    private volatile CountDownLatch firstPlainTries;
    private final Set<Integer> triedFirst = ConcurrentHashMap.newKeySet();
    private volatile boolean stopping;

    Workload(List<Integer> ports, FencedRegister register, String tenant) {
        this.ports = ports;
        this.register = register;
        this.tenant = tenant;
    }

    private void firstPlainTryDone(int client) {
        if (!waits(client) && triedFirst.add(client)) {
            firstPlainTries.countDown();
        }
    }

    /** Half the clients acquire with waitSeconds: the odd ones. */
    private static boolean waits(int client) {
        return client % 2 == 1;
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
        // The clients that wait start once every plain client has tried its first acquire: the keys are free
        // then, with no queue that a hand-over would serve first, so the plain path is certain to grant some.
        firstPlainTries = new CountDownLatch((clients + 1) / 2);
        try (ExecutorService pool = Executors.newFixedThreadPool(clients)) {
            List<Future<?>> running = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                int client = c;
                running.add(pool.submit(() -> {
                    start.await();
                    if (waits(client)) {
                        firstPlainTries.await();
                    }
                    try {
                        for (int i = 0; i < iterations && !stopping; i++) {
                            iteration(client, i);
                        }
                    } finally {
                        firstPlainTryDone(client); // also when it failed before its first try
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
        List<LeasekeeperClient> instances = instancesFor(TestTokens.token(subject, tenant, TestTokens.WRITE));
        String key = KEYS.get((client + iteration) % KEYS.size());
        int behaviour = (client + iteration) % 4;   // 0 plain, 1 renews, 2 pauses past its TTL, 3 retries its acquire
        int ttl = behaviour == 2 ? 1 : 30;          // 30 s: no stall of a loaded machine lets a working lease lapse
        String id = subject + "-" + iteration;
        boolean waits = waits(client);
        AcquireRequest plain = AcquireRequest.of(LeaseKey.of(Target.opaque(key), "worker"), subject, ttl);
        AcquireRequest request = waits ? plain.withWaitSeconds(WAIT_SECONDS) : plain;
        Answer<Lease> acquired;
        try {
            acquired = call(client, instances, c -> c.acquire(request, id + "-acquire"));
        } finally {
            firstPlainTryDone(client);
        }
        if (acquired == null) {
            return;
        }
        if (acquired.problem() instanceof ProblemException.Busy) {
            count(waits ? "held after waiting" : "held");
            if (!waits) {
                pause(HELD_PAUSE); // a polite client does not spin on a held key
            }
            return;
        }
        if (acquired.problem() != null) {
            violations.add(subject + " acquire answered " + acquired);
            return;
        }
        count(waits ? "acquired by a waiting acquire" : "acquired");
        grants.incrementAndGet();
        UUID leaseId = acquired.value().leaseId();
        long fencingToken = acquired.value().fencingToken();

        CompletableFuture<Answer<Lease>> watch = null;
        long watchSent = System.nanoTime();
        if (behaviour == 1) {
            watch = CompletableFuture.supplyAsync(() -> call(client, instances, c -> c.watch(leaseId, WATCH_SECONDS)),
                    Thread::startVirtualThread);
        }
        switch (behaviour) {
            case 1 -> expectLease(call(client, instances, c -> c.renew(leaseId, fencingToken, null, id + "-renew")),
                    "renewed");
            case 2 -> {
                // A stop-the-world pause: the lease lapses (by the database's clock) while the client is
                // frozen, and the world moves on (a newer holder writes) before it wakes and writes.
                await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).ignoreExceptions().until(() ->
                        "expired".equals(call(client, instances, c -> c.inspect(leaseId)).value().state()));
                count("paused past TTL");
                try {
                    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                            .until(() -> register.lastToken(key) > fencingToken);
                } catch (ConditionTimeoutException e) {
                    count("paused past TTL, no newer holder wrote within 10 s");
                }
            }
            case 3 -> {
                Answer<Lease> replay = call(client, instances, c -> c.acquire(request, id + "-acquire"));
                if (replay == null || replay.problem() != null || !leaseId.equals(replay.value().leaseId())) {
                    violations.add(subject + " retried acquire made another answer: " + replay);
                } else {
                    count("acquire replayed");
                }
            }
            default -> { }
        }
        boolean written = register.write(key, fencingToken, subject, subject + "#" + iteration, behaviour == 2);
        count(written ? "register write accepted" : "register write rejected");
        Answer<Lease> released = call(client, instances, c -> c.release(leaseId, fencingToken, id + "-release"));
        if (behaviour == 2) {
            expectProblem(released, 410, "release after pause refused");
        } else {
            expectLease(released, "released");
        }
        if (watch != null) {
            watchEnded(subject, watch, watchSent);
        }
    }

    /** A watch of a lease its holder has released answers it not active, unless it reached its deadline first. */
    private void watchEnded(String subject, CompletableFuture<Answer<Lease>> watch, long sentNanos) {
        Answer<Lease> answer = watch.orTimeout(WATCH_SECONDS + 30, TimeUnit.SECONDS).join();
        if (answer == null) {
            return; // gave up after its retries: already a violation
        }
        if (answer.problem() != null) {
            violations.add(subject + " watch answered " + answer);
        } else if (!answer.value().active()) {
            count("watch ended by release");
        } else if (System.nanoTime() - sentNanos >= Duration.ofSeconds(WATCH_SECONDS).toNanos()) {
            count("watch reached its deadline");
        } else {
            violations.add(subject + " watch answered an active lease before its deadline: " + answer);
        }
    }

    /** What an instance answered: a value, or the problem the library threw. */
    private record Answer<T>(T value, ProblemException problem) {
        @Override
        public String toString() {
            return problem == null ? String.valueOf(value) : problem.status() + " " + problem.problem().body();
        }
    }

    /** A library client per instance, as the bearer of {@code token}; one attempt per call, the workload retries. */
    private List<LeasekeeperClient> instancesFor(String token) {
        return ports.stream().map(port -> LeasekeeperClient.builder(URI.create("http://127.0.0.1:" + port))
                .httpClient(HTTP).token(token).requestTimeout(REQUEST_TIMEOUT)
                .retries(1, Duration.ZERO, Duration.ZERO).build()).toList();
    }

    /**
     * One request, sent to the client's instance and, while an instance is unreachable or answers 503 (or 429
     * TENANT_BUSY), to the next
     * (the same request: a write keeps its Idempotency-Key); null when none answered within {@link #ATTEMPTS}.
     */
    private <T> Answer<T> call(int client, List<LeasekeeperClient> instances, Function<LeasekeeperClient, T> request) {
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            LeasekeeperClient instance = instances.get((client + attempt) % instances.size());
            try {
                return new Answer<>(request.apply(instance), null);
            } catch (ProblemException e) {
                if (e.status() == 503) {
                    unavailableAt.add(System.nanoTime());
                    count("503 retried");
                    backOff();
                    continue;
                }
                if (e instanceof ProblemException.TenantBusy) {
                    // The instance was busy (contract 1.2): load, not a failure; retried as the client library does.
                    count("429 TENANT_BUSY retried");
                    backOff();
                    continue;
                }
                if (e.status() >= 500) {
                    violations.add("a " + e.status() + " other than 503: " + e.problem().body());
                }
                return new Answer<>(null, e);
            } catch (ServiceUnavailableException e) {
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

    private void expectLease(Answer<Lease> answer, String outcome) {
        if (answer != null && answer.problem() == null) {
            count(outcome);
        } else {
            violations.add(outcome + ": expected the lease but got " + (answer == null ? "no answer" : answer));
        }
    }

    private void expectProblem(Answer<Lease> answer, int status, String outcome) {
        if (answer != null && answer.problem() != null && answer.problem().status() == status) {
            count(outcome);
        } else {
            violations.add(outcome + ": expected " + status + " but got " + (answer == null ? "no answer" : answer));
        }
    }

    private void count(String outcome) {
        outcomes.computeIfAbsent(outcome, o -> new AtomicLong()).incrementAndGet();
    }

}
