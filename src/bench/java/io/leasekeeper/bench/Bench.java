package io.leasekeeper.bench;

import io.leasekeeper.support.ServiceProcess;
import io.leasekeeper.support.TestTokens;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The load harness: starts the built service against the given PostgreSQL, drives it over HTTP with
 * real JWTs through each workload, runs pgbench on the same statements at the same concurrency, and
 * writes the report (docs/performance.md says how to read it). Run it with {@code bash src/bench/run}.
 */
public final class Bench {

    private final Flags flags;
    private final Database database;
    private Pgbench pgbench;
    private CpuUse cpu;
    private final Report report;
    private final String token = TestTokens.token("bench", "bench", TestTokens.WRITE);
    private ServiceProcess service;

    private Bench(Flags flags) {
        this.flags = flags;
        this.database = new Database(flags.jdbcUrl(), flags.keys());
        this.report = new Report(flags);
    }

    public static void main(String[] args) throws Exception {
        List<String> words = new ArrayList<>();
        for (String arg : args) {
            words.addAll(List.of(arg.trim().split("\\s+")));
        }
        Flags flags = Flags.parse(words.toArray(String[]::new));
        new Bench(flags).run();
    }

    private void run() throws Exception {
        Path log = Path.of("target", "bench", "service.log");
        Files.deleteIfExists(log);
        List<String> arguments = new ArrayList<>(List.of("--spring.datasource.url=" + flags.jdbcUrl(),
                "--spring.datasource.hikari.maximum-pool-size=" + flags.poolSize(),
                "--spring.security.oauth2.resourceserver.jwt.public-key-location=" + TestTokens.publicKeyLocation()));
        arguments.addAll(flags.serviceArgs());
        service = ServiceProcess.ofCommand(List.of(ServiceProcess.java(), "-Xmx1g", "-jar",
                ServiceProcess.builtJar().toString()), null, log, arguments);
        try (ServiceProcess started = service) {
            started.start(); // Flyway has made the tables
            cpu = new CpuUse(started.pid(), CpuUse.parentOf(database.count("SELECT pg_backend_pid()")));
            pgbench = new Pgbench(database, Path.of("target", "bench", "pgbench"), cpu);
            database.reset(flags.scaleSmall());
            // A fresh JVM interprets, then compiles what runs hot: measure the compiled service only.
            System.out.println("== warm-up of the service's JIT, " + flags.jit().toSeconds() + " s");
            try (HttpLoad load = HttpLoad.start(service.port(), token, 32, cycleUnit(32), cpu)) {
                Thread.sleep(flags.jit());
            }
            report.environment(database);
            for (String workload : flags.workloads()) {
                System.out.println("== " + workload);
                switch (workload) {
                    case "cycle" -> cycle();
                    case "renew" -> renew();
                    case "hotkey" -> hotKey();
                    case "scale" -> scale();
                    case "expiry" -> massExpiry();
                    default -> throw new IllegalArgumentException("unknown workload " + workload);
                }
            }
        }
        Path out = Path.of(flags.report());
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, report.markdown());
        System.out.println(report.markdown());
        System.out.println("Report written to " + out.toAbsolutePath());
    }

    /** Acquire then release on random keys of the client's own share of the key space. */
    private HttpLoad.Unit cycleUnit(int clients) {
        int perClient = Math.max(1, flags.keys() / clients);
        return (client, calls) -> {
            long start = System.nanoTime();
            int target = client * perClient + ThreadLocalRandom.current().nextInt(perClient);
            HttpLoad.Calls.Answer acquired = calls.post("acquire", "/v1/leases", """
                    {"target": {"type": "opaque", "value": "%d"}, "actor": "bench", "operation": "bench",
                     "holder": "bench-client", "ttlSeconds": 30, "jobId": "bench-job"}""".formatted(target), 201);
            calls.post("release", "/v1/leases/" + acquired.body().get("leaseId").asString() + "/release",
                    "{\"fencingToken\": " + acquired.body().get("fencingToken").asLong() + "}", 200);
            calls.time("cycle", start);
        };
    }

    private HttpLoad.Window measured(int clients, HttpLoad.Unit unit) throws InterruptedException, IOException {
        try (HttpLoad load = HttpLoad.start(service.port(), token, clients, unit, cpu)) {
            Thread.sleep(flags.warmup());
            load.measure();
            Thread.sleep(flags.duration());
            return load.measure();
        }
    }

    private void cycle() throws Exception {
        for (int clients : flags.clients()) {
            database.reset(flags.scaleSmall());
            HttpLoad.Window http = measured(clients, cycleUnit(clients));
            Pgbench.Result db = null;
            if (flags.ceiling()) {
                database.reset(flags.scaleSmall());
                db = pgbench.run("cycle-" + clients, Pgbench.cycleScript(Math.max(1, flags.keys() / clients)),
                        clients, flags.warmup(), flags.duration());
            }
            report.cycle(clients, http, db);
        }
    }

    private void renew() throws Exception {
        int clients = 32;
        database.reset(flags.scaleSmall());
        database.seed("bench", "bench", "r", flags.renewLeases(), database.now().plusSeconds(3600), 3600);
        List<Database.SeededLease> leases = database.numbered("r");
        database.analyze();
        HttpLoad.Window http = measured(clients, (client, calls) -> {
            Database.SeededLease lease = leases.get(ThreadLocalRandom.current().nextInt(leases.size()));
            calls.post("renew", "/v1/leases/" + lease.id() + "/renew",
                    "{\"fencingToken\": " + lease.fencingToken() + ", \"ttlSeconds\": 3600}", 200);
        });
        Pgbench.Result db = flags.ceiling()
                ? pgbench.run("renew", Pgbench.renewScript(leases.size()), clients, flags.warmup(), flags.duration()) : null;
        report.renew(clients, leases.size(), http, db);
    }

    /** 64 clients after one key: whoever gets it releases it at once; the others are told LEASE_HELD. */
    private void hotKey() throws Exception {
        int clients = 64;
        database.reset(flags.scaleSmall());
        HttpLoad.Window http = measured(clients, (client, calls) -> {
            HttpLoad.Calls.Answer answer = calls.post("acquire", "/v1/leases", """
                    {"target": {"type": "opaque", "value": "hot"}, "actor": "bench", "holder": "bench-client",
                     "ttlSeconds": 30}""", 201, 409);
            if (answer.status() == 201) {
                calls.post("release", "/v1/leases/" + answer.body().get("leaseId").asString() + "/release",
                        "{\"fencingToken\": " + answer.body().get("fencingToken").asLong() + "}", 200);
            }
        });
        report.hotKey(clients, http);
    }

    /** The cycle at 32 clients beside few and beside very many other active leases. */
    private void scale() throws Exception {
        int clients = 32;
        List<HttpLoad.Window> windows = new ArrayList<>();
        List<Duration> seeding = new ArrayList<>();
        for (int others : List.of(flags.scaleSmall(), flags.scaleLarge())) {
            long start = System.nanoTime();
            database.reset(others);
            seeding.add(Duration.ofNanos(System.nanoTime() - start));
            windows.add(measured(clients, cycleUnit(clients)));
        }
        report.scale(clients, windows.get(0), windows.get(1), seeding.get(1));
        database.reset(flags.scaleSmall());
    }

    /**
     * Many leases expiring at one instant while the cycle runs: how long until the sweeper has marked them
     * all, and the cycle's latency meanwhile against its latency just before.
     */
    private void massExpiry() throws Exception {
        int clients = 32;
        database.reset(flags.scaleSmall());
        Instant expiry = database.now().plus(flags.warmup()).plus(flags.duration());
        database.seed("other", "other", "e", flags.expiryLeases(), expiry, 60);
        database.analyze();
        try (HttpLoad load = HttpLoad.start(service.port(), token, clients, cycleUnit(clients), cpu)) {
            Thread.sleep(flags.warmup());
            load.measure();
            waitUntil(expiry);
            HttpLoad.Window before = load.measure();
            long unsweptAtExpiry = database.unswept();
            Instant deadline = expiry.plusSeconds(120);
            while (database.anyUnswept() && database.now().isBefore(deadline)) {
                Thread.sleep(50);
            }
            Instant done = database.now();
            HttpLoad.Window during = load.measure();
            long left = database.unswept();
            report.massExpiry(clients, flags.expiryLeases(), unsweptAtExpiry, Duration.between(expiry, done), left,
                    before, during);
        }
        database.reset(flags.scaleSmall());
    }

    private void waitUntil(Instant instant) throws InterruptedException {
        while (database.now().isBefore(instant)) {
            Thread.sleep(20);
        }
    }
}
