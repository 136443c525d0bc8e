package io.leasekeeper.bench;

import io.leasekeeper.support.ServiceProcess;
import io.leasekeeper.support.TestTokens;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

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
    private long postmasterPid;
    /** etcd beside the cycle and renew workloads (--etcd-beside): started at its first use, stopped at the end. */
    private Etcd beside;
    private CpuUse besideCpu;

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
        postmasterPid = CpuUse.parentOf(database.count("SELECT pg_backend_pid()"));
        service = newService("service");
        try (ServiceProcess started = service) {
            // etcd's workload alone needs no service: none is started, and no JIT warm-up is spent on it.
            if (flags.needsService()) {
                started.start(); // Flyway has made the tables
                cpu = new CpuUse(started.pid(), postmasterPid);
                pgbench = new Pgbench(database, Path.of("target", "bench", "pgbench"), cpu);
                database.reset(flags.scaleSmall());
                if (flags.workloads().contains("hotkey-wait")) {
                    // Before minutes of other workloads: a server without waiting acquires fails here, at once.
                    waitingAcquireProbe(service.port(), service.port());
                    database.reset(flags.scaleSmall());
                }
                // A fresh JVM interprets, then compiles what runs hot: measure the compiled service only.
                System.out.println("== warm-up of the service's JIT, " + flags.jit().toSeconds() + " s");
                try (HttpLoad load = HttpLoad.start(service.port(), token, 32, cycleUnit(32), cpu)) {
                    Thread.sleep(flags.jit());
                }
            }
            report.environment(database, flags.needsService());
            try {
                for (String workload : flags.workloads()) {
                    System.out.println("== " + workload);
                    switch (workload) {
                        case "cycle" -> cycle();
                        case "renew" -> renew();
                        case "hotkey" -> hotKey();
                        case "hotkey-wait" -> hotKeyWait();
                        case "etcd-hotkey" -> etcdHotKey();
                        case "wrk-cycle" -> wrkCycle();
                        case "wrk-renew" -> wrkRenew();
                        case "wrk-hotkey" -> wrkHotKey();
                        case "scale" -> scale();
                        case "expiry" -> massExpiry();
                        case "tenant-flood" -> tenantFlood();
                        case "retention" -> retention();
                        case "sharing" -> sharing();
                        default -> throw new IllegalArgumentException("unknown workload " + workload);
                    }
                }
            } finally {
                if (beside != null) {
                    beside.close();
                }
            }
        }
        Path out = Path.of(flags.report());
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, report.markdown());
        System.out.println(report.markdown());
        System.out.println("Report written to " + out.toAbsolutePath());
    }

    /** An instance of the built service on the run's database; its output in target/bench/{name}.log. */
    private ServiceProcess newService(String name) throws IOException {
        // The service as a user starts it (issue 32): with its default limits, unless --limits=off.
        return newService(name, limits());
    }

    /** The tenant limits as the run has them: the defaults (none given), or off with --limits=off. */
    private List<String> limits() {
        return flags.limitsOff() ? List.of("--leasekeeper.limits.requests-per-second-per-tenant=0",
                "--leasekeeper.limits.requests-in-progress=100000") : List.of();
    }

    private ServiceProcess newService(String name, List<String> limits) throws IOException {
        return newService(name, flags.jdbcUrl(), limits);
    }

    private ServiceProcess newService(String name, String jdbcUrl, List<String> limits) throws IOException {
        Path log = Path.of("target", "bench", name + ".log");
        Files.deleteIfExists(log);
        Files.deleteIfExists(log.resolveSibling(name + ".stderr.log"));
        List<String> arguments = new ArrayList<>(List.of("--spring.datasource.url=" + jdbcUrl,
                "--spring.datasource.hikari.maximum-pool-size=" + flags.poolSize(),
                "--spring.security.oauth2.resourceserver.jwt.public-key-location=" + TestTokens.publicKeyLocation()));
        arguments.addAll(limits);
        arguments.addAll(flags.serviceArgs());
        List<String> launch = new ArrayList<>(List.of(ServiceProcess.java()));
        launch.addAll(flags.serviceJvm());
        launch.addAll(List.of("-jar", ServiceProcess.builtJar().toString()));
        return ServiceProcess.ofCommand(launch, null, log, arguments);
    }

    /** Tenants of the sharing workload's many-tenant cycle, and its rounds of each comparison. */
    private static final int SHARING_TENANTS = 32;
    private static final int SHARING_ROUNDS = 3;

    /**
     * How an instance is shared (issue 32), in one run: the cycle at 8 and 32 clients of one tenant on an instance
     * with the default limits and on one with the limits off, one after the other, then 32 clients of 32 tenants
     * (one each) on the instance with the defaults, each comparison in rounds alternating the instances. The targets,
     * on the median of the rounds' ratios: one tenant with the defaults within 10% of the same clients with the limits
     * off, and 32 tenants with the defaults within 10% of one tenant with the limits off.
     * The instance with the defaults is the run's own service unless --limits=off, then a second one.
     */
    private void sharing() throws Exception {
        List<String> off = List.of("--leasekeeper.limits.requests-per-second-per-tenant=0",
                "--leasekeeper.limits.requests-in-progress=100000");
        try (ServiceProcess other = newService("sharing", flags.limitsOff() ? List.of() : off)) {
            other.start();
            ServiceProcess defaults = flags.limitsOff() ? other : service;
            ServiceProcess limitsOff = flags.limitsOff() ? service : other;
            CpuUse defaultsCpu = new CpuUse(defaults.pid(), postmasterPid);
            CpuUse offCpu = new CpuUse(limitsOff.pid(), postmasterPid);
            try (HttpLoad warm = HttpLoad.start(other.port(), token, 32, cycleUnit(32), offCpu)) {
                Thread.sleep(flags.jit()); // the second instance's JIT, as the first one's at start
            }
            String[] tokens = new String[SHARING_TENANTS];
            for (int i = 0; i < tokens.length; i++) {
                tokens[i] = TestTokens.token("bench", "bench-" + i, TestTokens.WRITE);
            }
            // Each comparison in rounds that alternate the two instances: back-to-back windows here differ by more
            // than the 10% the targets resolve, so one pair decides nothing; the median of the rounds' ratios does.
            for (int clients : List.of(8, 32)) {
                List<HttpLoad.Window> withDefaults = new ArrayList<>();
                List<HttpLoad.Window> withoutLimits = new ArrayList<>();
                for (int round = 0; round < SHARING_ROUNDS; round++) {
                    database.reset(flags.scaleSmall());
                    withoutLimits.add(measuredOn(limitsOff, offCpu, clients, client -> token));
                    database.reset(flags.scaleSmall());
                    withDefaults.add(measuredOn(defaults, defaultsCpu, clients, client -> token));
                }
                report.sharing(clients + " clients, one tenant", withDefaults, withoutLimits);
            }
            List<HttpLoad.Window> manyTenants = new ArrayList<>();
            List<HttpLoad.Window> oneTenantOff = new ArrayList<>();
            for (int round = 0; round < SHARING_ROUNDS; round++) {
                database.reset(flags.scaleSmall());
                oneTenantOff.add(measuredOn(limitsOff, offCpu, 32, client -> token));
                database.reset(flags.scaleSmall());
                manyTenants.add(measuredOn(defaults, defaultsCpu, 32, client -> tokens[client % tokens.length]));
            }
            report.sharing("32 clients, " + SHARING_TENANTS + " tenants (limits off: one tenant)", manyTenants,
                    oneTenantOff);
        }
    }

    private HttpLoad.Window measuredOn(ServiceProcess instance, CpuUse instanceCpu, int clients,
                                      java.util.function.IntFunction<String> tokens) throws Exception {
        try (HttpLoad load = HttpLoad.startPerClient(List.of(instance.port()), tokens, Duration.ofSeconds(30), clients,
                cycleUnit(clients), instanceCpu)) {
            return window(load);
        }
    }

    /** Tenant B's clients and tenant A's in the flood workload; the rate one tenant gets is --flood-rate. */
    private static final int FLOOD_QUIET_CLIENTS = 4;
    private static final int FLOOD_CLIENTS = 64;

    /**
     * One tenant's flood beside another's steady work (issue 17): tenant B runs the cycle with a few clients at a
     * steady pace, alone, then while tenant A runs it as fast as it can with many more clients on the same
     * instance. The instance has the tenant limits on: a per-tenant rate (--flood-rate, with a burst of one
     * second's worth) of a fraction of what it serves, and the default sharing of its request slots. A's clients
     * honour the 429s as a good client does: they wait the Retry-After (1 s), and a release refused is sent again. The target: B's cycle p99 during the flood at most twice its
     * quiet value.
     */
    private void tenantFlood() throws Exception {
        database.reset(flags.scaleSmall());
        String tokenA = TestTokens.token("flood", "tenant-a", TestTokens.WRITE);
        String tokenB = TestTokens.token("steady", "tenant-b", TestTokens.WRITE);
        try (ServiceProcess limited = newService("flood", List.of(
                "--leasekeeper.limits.requests-per-second-per-tenant=" + flags.floodRate(),
                "--leasekeeper.limits.request-burst-per-tenant=" + flags.floodRate(),
                "--leasekeeper.metrics.tenant-tag=true"))) {
            limited.start();
            CpuUse floodCpu = new CpuUse(limited.pid(), postmasterPid);
            // The new instance's JIT first, on the paths both tenants take (acquire, release, 409s, 429s), by two
            // other tenants: measured on a barely compiled instance, B's quiet figures were three times the CPU per
            // request of the steady state, and compilation ran on into the flood.
            try (HttpLoad warmA = HttpLoad.start(limited.port(), TestTokens.token("warm", "tenant-c", TestTokens.WRITE),
                    FLOOD_CLIENTS, floodUnit(), floodCpu);
                 HttpLoad warmB = HttpLoad.start(limited.port(), TestTokens.token("warm", "tenant-d", TestTokens.WRITE),
                         FLOOD_QUIET_CLIENTS, steadyUnit(), floodCpu)) {
                Thread.sleep(flags.jit());
            }
            HttpLoad.Window quiet;
            HttpLoad.Window flooded;
            HttpLoad.Window flood;
            double[] serverP99;
            try (HttpLoad b = HttpLoad.start(limited.port(), tokenB, FLOOD_QUIET_CLIENTS, steadyUnit(), floodCpu)) {
                Thread.sleep(flags.warmup());
                b.measure();
                ServerTimes.Buckets quietStart = ServerTimes.of(limited.managementPort(), "tenant-b");
                Thread.sleep(flags.duration());
                quiet = b.measure();
                ServerTimes.Buckets quietEnd = ServerTimes.of(limited.managementPort(), "tenant-b");
                try (HttpLoad a = HttpLoad.start(limited.port(), tokenA, FLOOD_CLIENTS, floodUnit(), floodCpu)) {
                    Thread.sleep(flags.warmup());
                    b.measure();
                    a.measure();
                    ServerTimes.Buckets floodStart = ServerTimes.of(limited.managementPort(), "tenant-b");
                    Thread.sleep(flags.duration());
                    flooded = b.measure();
                    flood = a.measure();
                    ServerTimes.Buckets floodEnd = ServerTimes.of(limited.managementPort(), "tenant-b");
                    serverP99 = new double[] {quietEnd.millis(quietStart, 99), floodEnd.millis(floodStart, 99)};
                }
            }
            report.tenantFlood(FLOOD_QUIET_CLIENTS, FLOOD_CLIENTS, flags.floodRate(), quiet, flooded, flood, serverP99);
        }
    }

    /** The retention workload's clients, and its instance's settings: every duration short, kept 75 s at most. */
    private static final int RETENTION_CLIENTS = 32;
    static final Duration RETENTION = Duration.ofSeconds(30);
    static final Duration RETENTION_LIFETIME_CAP = Duration.ofSeconds(30);
    static final Duration RETENTION_PARTITION = Duration.ofSeconds(10);
    static final Duration RETENTION_INTERVAL = Duration.ofSeconds(5);
    private static final Duration RETENTION_SAMPLE = Duration.ofSeconds(10);

    /**
     * Retention at the cycle's full event rate (issue 17): the cycle, as fast as its clients go, on an instance
     * whose leases live at most 30 s and are kept 30 s after they end, with partitions of 10 s of acquisitions and
     * the retention job every 5 s; every 10 s, the rows of {@code lease_event} and {@code lease} and how long ago
     * the oldest of each was acquired. On a database of its own: the other workloads' instance makes partitions
     * of a day, seven days ahead, and this instance would write into those. The target: once the first leases are
     * past their retention, no row older than the retention allows.
     */
    private void retention() throws Exception {
        Database own = database.newDatabase("leasekeeper_retention");
        List<String> settings = new ArrayList<>(limits());
        settings.addAll(List.of("--leasekeeper.lease.max-ttl=30s", "--leasekeeper.lease.default-max-lifetime=30s",
                "--leasekeeper.lease.max-lifetime-cap=" + RETENTION_LIFETIME_CAP.toSeconds() + "s",
                "--leasekeeper.audit.retention=" + RETENTION.toSeconds() + "s",
                "--leasekeeper.idempotency.retention=" + RETENTION.toSeconds() + "s",
                "--leasekeeper.audit.partition-width=" + RETENTION_PARTITION.toSeconds() + "s",
                "--leasekeeper.audit.partitions-ahead=12",
                "--leasekeeper.audit.cleanup-interval=" + RETENTION_INTERVAL.toSeconds() + "s"));
        List<Report.TableSize> sizes = new ArrayList<>();
        HttpLoad.Window run;
        try (ServiceProcess retaining = newService("retention", own.url, settings)) {
            retaining.start();
            CpuUse retentionCpu = new CpuUse(retaining.pid(), postmasterPid);
            try (HttpLoad load = HttpLoad.start(retaining.port(), token, RETENTION_CLIENTS,
                    cycleUnit(RETENTION_CLIENTS), retentionCpu)) {
                Thread.sleep(flags.jit().dividedBy(4)); // the new instance's JIT
                load.measure();
                long start = System.nanoTime();
                long end = start + flags.retentionRun().toNanos();
                while (System.nanoTime() < end) {
                    Thread.sleep(RETENTION_SAMPLE);
                    sizes.add(new Report.TableSize((System.nanoTime() - start) / 1e9,
                            own.count("SELECT count(*) FROM lease_event"), own.count("SELECT count(*) FROM lease"),
                            own.count("SELECT count(*) FROM pg_inherits WHERE inhparent = CAST('lease_event' AS regclass)"),
                            own.ageOfOldest("SELECT min(lease_acquired_at) FROM lease_event"),
                            own.ageOfOldest("SELECT min(acquired_at) FROM lease")));
                }
                run = load.measure();
            }
        }
        report.retention(RETENTION_CLIENTS, run, sizes);
    }

    /**
     * Tenant B's steady work: the cycle, at most 20 a second per client (a cycle is two requests: 160 a second
     * for the 4 clients, within the tenant's rate), so that B's own rate limit never refuses it.
     */
    private HttpLoad.Unit steadyUnit() {
        HttpLoad.Unit cycle = cycleUnit(FLOOD_QUIET_CLIENTS);
        return (client, calls) -> {
            long start = System.nanoTime();
            cycle.run(client, calls);
            long left = TimeUnit.MILLISECONDS.toNanos(50) - (System.nanoTime() - start);
            if (left > 0) {
                TimeUnit.NANOSECONDS.sleep(left);
            }
        };
    }

    /** Tenant A's cycle on keys of its own, waiting out each 429 (Retry-After is at least 1 s). */
    private HttpLoad.Unit floodUnit() {
        return (client, calls) -> {
            HttpLoad.Calls.Answer acquired = calls.post("flood acquire", "/v1/leases",
                    "{\"target\": {\"type\": \"opaque\", \"value\": \"flood-" + client + "\"}, \"actor\": \"bench\","
                            + " \"holder\": \"flood\", \"ttlSeconds\": 30}", 201, 409, 429);
            if (acquired.status() != 201) {
                Thread.sleep(1_000); // a 429 (Retry-After is at least 1 s), or a 409
                return;
            }
            String release = "/v1/leases/" + acquired.body().get("leaseId").asString() + "/release";
            String token = "{\"fencingToken\": " + acquired.body().get("fencingToken").asLong() + "}";
            while (calls.post("flood release", release, token, 200, 429).status() == 429) {
                Thread.sleep(1_000); // a good client releases what it holds, after the Retry-After
            }
        };
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

    /** What one measured window of a hot-key workload saw: the clients' calls and the hand-overs. */
    private record HandOverWindow(HttpLoad.Window http, HandOvers.Window handOvers) {
    }

    /** Warm-up, then one measured window of the load and its hand-overs together. */
    private HandOverWindow measuredHandOvers(HttpLoad load, HandOvers handOvers, Duration warmup)
            throws InterruptedException, IOException {
        Thread.sleep(warmup);
        load.measure();
        handOvers.measure();
        Thread.sleep(flags.duration());
        return new HandOverWindow(load.measure(), handOvers.measure());
    }

    private HttpLoad.Window measured(int clients, HttpLoad.Unit unit) throws InterruptedException, IOException {
        try (HttpLoad load = HttpLoad.start(service.port(), token, clients, unit, cpu)) {
            return window(load);
        }
    }

    /** Warm-up, then one measured window. */
    private HttpLoad.Window window(HttpLoad load) throws InterruptedException, IOException {
        Thread.sleep(flags.warmup());
        load.measure();
        Thread.sleep(flags.duration());
        return load.measure();
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
            if (flags.etcdBeside()) {
                report.besideEtcd("cycle", clients, etcdBeside().version(), http, etcdCycle(clients));
            }
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
        if (flags.etcdBeside()) {
            report.besideEtcd("renew", clients, etcdBeside().version(), http, etcdRenew(clients, leases.size()));
        }
    }

    /**
     * The cycle with wrk for both sides (docs/performance.md, "wrk, the same generator for both"): at each of
     * {@code --clients}, the service's cycle, then etcd's, each on its own share of keys per client.
     */
    private void wrkCycle() throws Exception {
        for (int clients : flags.clients()) {
            database.reset(flags.scaleSmall());
            String perClient = String.valueOf(Math.max(1, flags.keys() / clients));
            String run = "c" + clients + "-" + System.nanoTime();
            Wrk.Result service = Wrk.run("service-cycle.lua", this.service.port(), clients, flags.warmup(),
                    flags.duration(), cpu, phase -> List.of(token, perClient, run + "-" + phase));
            Wrk.Result etcd = Wrk.run("etcd-cycle.lua", etcdBeside().clientPort(), clients, flags.warmup(),
                    flags.duration(), besideCpu, phase -> List.of(perClient, run + "-" + phase));
            report.wrk("cycle", clients, etcdBeside().version(), service, etcd);
        }
    }

    /**
     * Renewals with wrk for both sides, 32 clients: the service's renew of a random one of {@code --renew-leases}
     * active leases, beside etcd's keep-alive of as many leases.
     */
    private void wrkRenew() throws Exception {
        int clients = 32;
        database.reset(flags.scaleSmall());
        database.seed("bench", "bench", "r", flags.renewLeases(), database.now().plusSeconds(3600), 3600);
        database.analyze();
        Path serviceLeases = Wrk.lines(Path.of("target", "bench", "wrk-service-leases.txt"), database.numbered("r")
                .stream().map(lease -> lease.id() + " " + lease.fencingToken()).toList());
        Wrk.Result service = Wrk.run("service-renew.lua", this.service.port(), clients, flags.warmup(),
                flags.duration(), cpu, phase -> List.of(token, serviceLeases.toAbsolutePath().toString()));
        Etcd etcd = etcdBeside();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < flags.renewLeases(); i++) {
            ids.add(HttpLoad.post(etcd.clientPort(), null, WAIT_TIMEOUT, "/v3/lease/grant", "{\"TTL\": 3600}").body()
                    .get("ID").asString());
        }
        Path etcdLeases = Wrk.lines(Path.of("target", "bench", "wrk-etcd-leases.txt"), ids);
        Wrk.Result kept = Wrk.run("etcd-renew.lua", etcd.clientPort(), clients, flags.warmup(), flags.duration(),
                besideCpu, phase -> List.of(etcdLeases.toAbsolutePath().toString()));
        report.wrk("renew", clients, etcd.version(), service, kept);
    }

    /**
     * The hot key with wrk for both sides, 64 clients after one key: the service's waiting acquire
     * ({@code waitSeconds} 30) and release, beside etcd's lock service (lock, which blocks until granted, and unlock).
     */
    private void wrkHotKey() throws Exception {
        int clients = 64;
        database.reset(flags.scaleSmall());
        String run = "h" + System.nanoTime();
        Wrk.Result service = Wrk.run("service-hotkey.lua", this.service.port(), clients, flags.warmup(),
                flags.duration(), cpu, phase -> List.of(token, run + "-" + phase));
        // An etcd of its own, and no warm-up phase: wrk stops its clients wherever they are, and etcd's lock service,
        // through its gateway, grants no more locks to the next clients once some were stopped while they waited (seen
        // with etcd 3.4.23, even after every lease was revoked). etcd needs no JIT warm-up.
        try (Etcd own = Etcd.start(flags.etcd(), Path.of(flags.etcdDir()), Duration.ofMinutes(10),
                Path.of("target", "bench", "etcd-wrk-hotkey.log"))) {
            Wrk.Result locks = Wrk.run("etcd-hotkey.lua", own.clientPort(), clients, Duration.ZERO, flags.duration(),
                    new CpuUse(own.pid(), postmasterPid), phase -> List.of(run + "-" + phase));
            report.wrk("hot key", clients, own.version(), service, locks);
        }
    }

    /** The etcd beside the cycle and renew workloads, started at its first use. */
    private Etcd etcdBeside() throws IOException, InterruptedException {
        if (beside == null) {
            beside = Etcd.start(flags.etcd(), Path.of(flags.etcdDir()), Duration.ofHours(6),
                    Path.of("target", "bench", "etcd-beside.log"));
            besideCpu = new CpuUse(beside.pid(), postmasterPid);
            System.out.println("etcd beside on 127.0.0.1:" + beside.clientPort() + ", " + beside.version());
        }
        return beside;
    }

    /**
     * etcd's cycle, the same clients on the same share of keys as the service's: each client grants itself a lease
     * once (a TTL longer than the run, so no keep-alive is needed), then per cycle one transaction that puts its key
     * with that lease if the key does not exist (the create-if-absent of etcd's lock recipe: "acquire"), and a
     * delete of the key ("release"). Through etcd's JSON gateway, one HTTP/1.1 connection per client.
     */
    private HttpLoad.Window etcdCycle(int clients) throws Exception {
        Etcd etcd = etcdBeside();
        int perClient = Math.max(1, flags.keys() / clients);
        String[] leases = new String[clients];
        String holder = Base64.getEncoder().encodeToString("bench-client".getBytes());
        try (HttpLoad load = HttpLoad.start(List.of(etcd.clientPort()), null, WAIT_TIMEOUT, clients, (client, calls) -> {
            if (leases[client] == null) {
                leases[client] = calls.post("lease grant", "/v3/lease/grant", "{\"TTL\": 86400}", 200)
                        .body().get("ID").asString();
            }
            long start = System.nanoTime();
            int target = client * perClient + ThreadLocalRandom.current().nextInt(perClient);
            String key = Base64.getEncoder().encodeToString(("leasekeeper-bench/" + clients + "/" + target).getBytes());
            HttpLoad.Calls.Answer put = calls.post("acquire", "/v3/kv/txn", """
                    {"compare": [{"key": "%1$s", "result": "EQUAL", "target": "CREATE", "create_revision": "0"}],
                     "success": [{"request_put": {"key": "%1$s", "value": "%2$s", "lease": "%3$s"}}],
                     "failure": [{"request_range": {"key": "%1$s"}}]}""".formatted(key, holder, leases[client]), 200);
            if (!put.body().path("succeeded").asBoolean()) {
                throw new IllegalStateException("etcd found a key of this client's own share held");
            }
            calls.post("release", "/v3/kv/deleterange", "{\"key\": \"" + key + "\"}", 200);
            calls.time("cycle", start);
        }, besideCpu)) {
            return window(load);
        }
    }

    /**
     * etcd's renewals: {@code leases} leases granted first, then the same clients as the service's renew each keep a
     * random one alive (/v3/lease/keepalive, one message per call). etcd keeps a lease's expiry in its leader's
     * memory only: a keep-alive writes nothing to disk, where the service's renew commits a row and an event.
     */
    private HttpLoad.Window etcdRenew(int clients, int leases) throws Exception {
        Etcd etcd = etcdBeside();
        List<String> ids;
        try (var granting = java.util.concurrent.Executors.newFixedThreadPool(clients)) {
            List<java.util.concurrent.Future<String>> granted = new ArrayList<>();
            for (int i = 0; i < leases; i++) {
                granted.add(granting.submit(() -> HttpLoad.post(etcd.clientPort(), null, WAIT_TIMEOUT, "/v3/lease/grant",
                        "{\"TTL\": 3600}").body().get("ID").asString()));
            }
            ids = new ArrayList<>();
            for (var id : granted) {
                ids.add(id.get());
            }
        }
        try (HttpLoad load = HttpLoad.start(List.of(etcd.clientPort()), null, WAIT_TIMEOUT, clients, (client, calls) -> {
            String id = ids.get(ThreadLocalRandom.current().nextInt(ids.size()));
            HttpLoad.Calls.Answer kept = calls.post("renew", "/v3/lease/keepalive", "{\"ID\": \"" + id + "\"}", 200);
            if (kept.body().path("result").path("TTL").asLong() <= 0) {
                throw new IllegalStateException("etcd's keep-alive found lease " + id + " expired: " + kept.body());
            }
        }, besideCpu)) {
            return window(load);
        }
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

    private static final Duration WAIT_TIMEOUT = Duration.ofSeconds(60); // above the longest wait, 30 s
    private static final int WAIT_CLIENTS = 64;
    private static final int WAIT_INSTANCES = 2;

    private static String acquireBody(String key, Integer waitSeconds) {
        return """
                {"target": {"type": "opaque", "value": "%s"}, "actor": "bench", "holder": "bench-client",
                 "ttlSeconds": 30%s}""".formatted(key, waitSeconds == null ? "" : ", \"waitSeconds\": " + waitSeconds);
    }

    private static String releaseBody(HttpLoad.Calls.Answer granted) {
        return "{\"fencingToken\": " + granted.body().get("fencingToken").asLong() + "}";
    }

    private static String releasePath(HttpLoad.Calls.Answer granted) {
        return "/v1/leases/" + granted.body().get("leaseId").asString() + "/release";
    }

    /**
     * Issue 15's waiting acquire on the hot key: a second instance of the service on the same database,
     * 64 clients split between the two, each acquiring with {@code waitSeconds: 30} (a 201 is a grant; a
     * 409 after the wait is counted and tried again) and releasing at once. Hand-overs as in {@link HandOvers}.
     */
    private void hotKeyWait() throws Exception {
        database.reset(flags.scaleSmall());
        try (ServiceProcess second = newService("service-2")) {
            second.start();
            CpuUse both = new CpuUse(Set.of(service.pid(), second.pid()), postmasterPid);
            // The second instance is a fresh JVM: the same JIT warm-up as the first had.
            System.out.println("== warm-up of the second instance's JIT, " + flags.jit().toSeconds() + " s");
            try (HttpLoad load = HttpLoad.start(second.port(), token, 32, cycleUnit(32), both)) {
                Thread.sleep(flags.jit());
            }
            database.reset(flags.scaleSmall());
            waitingAcquireProbe(service.port(), second.port());
            HandOvers handOvers = new HandOvers();
            HandOverWindow measured;
            try (HttpLoad load = HttpLoad.start(List.of(service.port(), second.port()), token, WAIT_TIMEOUT,
                    WAIT_CLIENTS, (client, calls) -> {
                        HttpLoad.Calls.Answer acquired = calls.post("acquire", "/v1/leases",
                                acquireBody("hot-wait", 30), 201, 409);
                        if (acquired.status() == 201) {
                            handOvers.granted(acquired.answeredAt());
                            releaseReported(handOvers, () -> calls.post("release", releasePath(acquired),
                                    releaseBody(acquired), 200));
                        }
                    }, both)) {
                // The waiting acquire's path (the queue, the hand-over, the notifications) is not the cycle's: its
                // own JIT warm-up, as long as the instances' first one, before the window.
                System.out.println("== warm-up of the hot key's waiting path, " + flags.jit().toSeconds() + " s");
                measured = measuredHandOvers(load, handOvers, flags.jit());
            }
            HttpLoad.Window http = measured.http();
            HandOvers.Window window = measured.handOvers();
            List<String> unexpected = http.outcomes().keySet().stream().filter(o -> o.startsWith("acquire ")
                    && !o.equals("acquire 201") && !o.equals("acquire 409")).toList();
            if (!unexpected.isEmpty() || window.handOvers() == 0) {
                throw new IllegalStateException("hotkey-wait: the waiting acquires did not work (answers " + http.outcomes()
                        + ", " + window.handOvers() + " hand-overs); no figures reported. See target/bench/service*.log");
            }
            report.hotKeyWait(WAIT_CLIENTS, WAIT_INSTANCES, http, window);
        }
    }

    private interface Release {
        HttpLoad.Calls.Answer call() throws Exception;
    }

    /** Reports the release's answer, or that it never came (then throws on, for the load to count the error). */
    private static void releaseReported(HandOvers handOvers, Release release) throws Exception {
        HttpLoad.Calls.Answer released;
        try {
            released = release.call();
        } catch (Exception e) {
            handOvers.releaseUnknown();
            throw e;
        }
        handOvers.released(released.answeredAt());
    }

    /**
     * Whether the service really waits: a lease held through one instance, an acquire with waitSeconds on
     * the other (or the same), the lease released a second later; the waiter must then be granted, after
     * the release and not before. Anything else (400: the server does not know waitSeconds yet; an
     * immediate 409: it ignores it) stops the benchmark here with what the server answered.
     */
    private void waitingAcquireProbe(int holderPort, int waiterPort) throws Exception {
        String key = "wait-probe-" + System.nanoTime();
        HttpLoad.Calls.Answer held = HttpLoad.post(holderPort, token, WAIT_TIMEOUT, "/v1/leases", acquireBody(key, null));
        if (held.status() != 201) {
            throw new IllegalStateException("hotkey-wait probe: the first acquire answered " + held.status() + ": " + held.body());
        }
        AtomicReference<Object> waited = new AtomicReference<>();
        long sent = System.nanoTime();
        Thread waiter = Thread.ofVirtual().start(() -> {
            try {
                waited.set(HttpLoad.post(waiterPort, token, WAIT_TIMEOUT, "/v1/leases", acquireBody(key, 10)));
            } catch (Exception e) {
                waited.set(e);
            }
        });
        Thread.sleep(1000);
        long releaseSent = System.nanoTime();
        HttpLoad.Calls.Answer released = HttpLoad.post(holderPort, token, WAIT_TIMEOUT, releasePath(held), releaseBody(held));
        if (released.status() != 200) {
            throw new IllegalStateException("hotkey-wait probe: the release answered " + released.status() + ": " + released.body());
        }
        waiter.join(Duration.ofSeconds(70));
        if (!(waited.get() instanceof HttpLoad.Calls.Answer answer)) {
            throw new IllegalStateException("hotkey-wait probe: the waiting acquire failed: " + waited.get());
        }
        String seen = answer.status() + " after " + (answer.answeredAt() - sent) / 1_000_000 + " ms (the release was sent after "
                + (releaseSent - sent) / 1_000_000 + " ms): " + answer.body();
        if (answer.status() == 400) {
            throw new IllegalStateException("hotkey-wait: the service refuses \"waitSeconds\" (answered " + seen
                    + "). It does not support waiting acquires yet (issue 15); run hotkey-wait once it does.");
        }
        if (answer.status() != 201) {
            throw new IllegalStateException("hotkey-wait: an acquire with \"waitSeconds\": 10 on a key freed a second later "
                    + "was not granted: " + seen);
        }
        if (answer.answeredAt() < releaseSent) {
            throw new IllegalStateException("hotkey-wait: a waiting acquire was granted while the key was still held: " + seen);
        }
        HttpLoad.Calls.Answer freed = HttpLoad.post(waiterPort, token, WAIT_TIMEOUT, releasePath(answer), releaseBody(answer));
        if (freed.status() != 200) {
            throw new IllegalStateException("hotkey-wait probe: the waiter's release answered " + freed.status() + ": " + freed.body());
        }
        System.out.println("hotkey-wait probe: the waiting acquire answered " + seen);
    }

    /**
     * etcd's lock on one key, for issue 15: a throwaway single-member etcd (loopback, fsync on), driven
     * through its JSON gateway with the same HTTP client as the service. Each client grants itself a lease
     * once (a TTL longer than the whole workload, so no keep-alive is needed), then loops: /v3/lock/lock
     * on the one name with its lease (etcd answers when the lock is the client's), /v3/lock/unlock with
     * the key that lock answered.
     */
    private void etcdHotKey() throws Exception {
        Duration each = flags.warmup().plus(flags.duration());
        Duration all = each.multipliedBy(flags.etcdClients().size());
        long ttl = all.toSeconds() + 300;
        try (Etcd etcd = Etcd.start(flags.etcd(), Path.of(flags.etcdDir()), all.plusSeconds(180),
                Path.of("target", "bench", "etcd.log"))) {
            System.out.println("etcd on 127.0.0.1:" + etcd.clientPort() + ", " + etcd.version() + ", data in " + etcd.dataDir());
            CpuUse etcdCpu = new CpuUse(etcd.pid(), postmasterPid);
            for (int clients : flags.etcdClients()) {
                String name = Base64.getEncoder().encodeToString(("leasekeeper-bench-hot-" + clients).getBytes());
                String[] leases = new String[clients];
                HandOvers handOvers = new HandOvers();
                HandOverWindow measured;
                try (HttpLoad load = HttpLoad.start(List.of(etcd.clientPort()), null, WAIT_TIMEOUT, clients,
                        (client, calls) -> {
                            if (leases[client] == null) {
                                leases[client] = calls.post("lease grant", "/v3/lease/grant", "{\"TTL\": " + ttl + "}", 200)
                                        .body().get("ID").asString();
                            }
                            HttpLoad.Calls.Answer locked = calls.post("lock", "/v3/lock/lock",
                                    "{\"name\": \"" + name + "\", \"lease\": \"" + leases[client] + "\"}", 200);
                            handOvers.granted(locked.answeredAt());
                            releaseReported(handOvers, () -> calls.post("unlock", "/v3/lock/unlock",
                                    "{\"key\": \"" + locked.body().get("key").asString() + "\"}", 200));
                        }, etcdCpu)) {
                    measured = measuredHandOvers(load, handOvers, flags.warmup());
                }
                int revoked = 0;
                for (String lease : leases) {
                    if (lease != null && HttpLoad.post(etcd.clientPort(), null, WAIT_TIMEOUT, "/v3/lease/revoke",
                            "{\"ID\": \"" + lease + "\"}").status() == 200) {
                        revoked++;
                    }
                }
                System.out.println("etcd-hotkey " + clients + " clients: " + measured.http().outcomes() + "; "
                        + revoked + " leases revoked");
                report.etcdHotKey(clients, etcd.version(), measured.http(), measured.handOvers());
            }
        }
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
