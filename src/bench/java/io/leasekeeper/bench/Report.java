package io.leasekeeper.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The benchmark's report, in Markdown: one table per workload, then the targets, met or not. */
final class Report {

    private final Flags flags;
    private final StringBuilder body = new StringBuilder();
    private final List<String> targets = new ArrayList<>();
    private long errors;
    private double bestCeiling;
    private int bestCeilingClients;
    private double cycleAt32;
    private final StringBuilder cycleCpu = new StringBuilder();
    /** The rows of the section "Beside etcd", written at the end. */
    private final StringBuilder besideEtcd = new StringBuilder();
    private final StringBuilder wrk = new StringBuilder();

    Report(Flags flags) {
        this.flags = flags;
    }

    /** {@code service}: whether the service was started (not for etcd-hotkey alone). */
    void environment(Database database, boolean service) throws IOException {
        String cpu = Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                .findFirst().map(l -> l.substring(l.indexOf(':') + 1).trim()).orElse("unknown");
        String memory = Files.readAllLines(Path.of("/proc/meminfo")).getFirst().replaceAll("\\s+", " ");
        body.append("# Leasekeeper benchmark\n\n")
                .append("- Machine: ").append(Runtime.getRuntime().availableProcessors()).append(" cores (")
                .append(cpu).append("), ").append(memory).append("; ")
                .append(service ? "service, PostgreSQL, pgbench" : "etcd (the service not started; PostgreSQL idle)")
                .append(" and the load clients all on it.\n")
                .append("- Java ").append(System.getProperty("java.version")).append("; PostgreSQL ")
                .append(database.count("SELECT current_setting('server_version_num')::bigint"))
                .append(" (commit_delay ").append(database.count("SELECT current_setting('commit_delay')::bigint"))
                .append(" µs, commit_siblings ")
                .append(database.count("SELECT current_setting('commit_siblings')::bigint")).append("); ")
                .append("service pool ").append(flags.poolSize()).append(" connections, tenant limits ")
                .append(flags.limitsOff() ? "off (--limits=off)" : "as by default").append(".\n")
                .append(service ? "- The service first runs the cycle at 32 clients for " + flags.jit().toSeconds()
                        + " s, unmeasured, so that its JIT has compiled the request path.\n" : "")
                .append("- Each figure: ").append(flags.warmup().toSeconds()).append(" s warm-up, then ")
                .append(flags.duration().toSeconds()).append(" s measured. Latencies in ms, from the client's ")
                .append("send to the whole answer read. pgbench calls the service's own functions, each in ")
                .append("autocommit as the service does (`-M prepared`); a pgbench transaction of the cycle is ")
                .append("acquire + release.\n\n");
    }

    void cycle(int clients, HttpLoad.Window http, Pgbench.Result db) {
        if (body.indexOf("## Cycle") < 0) {
            body.append("## Cycle: acquire then release, random keys among ").append(flags.keys()).append("\n\n")
                    .append("| clients | cycles/s | pgbench cycles/s | ratio | acquire p50 | acquire p99 | acquire p99.9 | ")
                    .append("release p99 | cycle p99 | pgbench cycle p50 | pgbench cycle p99 | errors |\n")
                    .append("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        }
        double ratio = db == null ? Double.NaN : http.perSecond() / db.tps();
        long failed = db == null ? 0 : db.failed();
        body.append(row(clients, fmt(http.perSecond()), db == null ? "-" : fmt(db.tps()), pct(ratio),
                ms(http, "acquire", 50), ms(http, "acquire", 99), ms(http, "acquire", 99.9), ms(http, "release", 99),
                ms(http, "cycle", 99), db == null ? "-" : fmt(db.millis(50)), db == null ? "-" : fmt(db.millis(99)),
                http.errors() + failed));
        count(http.errors() + failed);
        cycleCpu.append(cpuRow(clients, http, db));
        if (clients == 8 || clients == 32) {
            double servicePerCycle = CpuUse.Cores.millisPer(http.cpu().service(), http.perSecond());
            double postgresPerCycle = CpuUse.Cores.millisPer(http.cpu().postgres(), http.perSecond());
            double perCycle = servicePerCycle + postgresPerCycle;
            target("CPU per cycle of the service and PostgreSQL together at " + clients + " clients at most 0.8 ms",
                    perCycle <= 0.8, fmt(perCycle) + " ms (" + fmt(servicePerCycle) + " + " + fmt(postgresPerCycle) + ")");
        }
        if (db != null && db.tps() > bestCeiling) {
            bestCeiling = db.tps();
            bestCeilingClients = clients;
        }
        if (clients == 32) {
            cycleAt32 = http.perSecond();
            target("Cycle throughput at 32 clients at least 60% of pgbench's", ratio >= 0.6,
                    pct(ratio) + " (" + fmt(http.perSecond()) + " vs " + (db == null ? "-" : fmt(db.tps())) + " cycles/s)");
            double p99 = http.millis("acquire", 99);
            target("p99 acquire at 32 clients under 25 ms", p99 < 25, fmt(p99) + " ms");
        }
    }

    /** Where the machine's CPU went while the cycle was measured: the service's run, then pgbench's. */
    private static String cpuRow(int clients, HttpLoad.Window http, Pgbench.Result db) {
        CpuUse.Cores service = http.cpu();
        double cycles = http.perSecond();
        String serviceRun = fmt(service.service()) + " / " + fmt(service.postgres()) + " / " + fmt(service.clients());
        String serviceRunPerCycle = fmt(CpuUse.Cores.millisPer(service.service(), cycles)) + " / "
                + fmt(CpuUse.Cores.millisPer(service.postgres(), cycles)) + " / "
                + fmt(CpuUse.Cores.millisPer(service.clients(), cycles));
        if (db == null || db.cpu() == null) {
            return row(clients, serviceRun, serviceRunPerCycle, "-", "-");
        }
        return row(clients, serviceRun, serviceRunPerCycle, fmt(db.cpu().postgres()) + " / " + fmt(db.cpu().pgbench()),
                fmt(CpuUse.Cores.millisPer(db.cpu().postgres(), db.tps())) + " / "
                        + fmt(CpuUse.Cores.millisPer(db.cpu().pgbench(), db.tps())));
    }

    /**
     * PostgreSQL on two cores does worst with many busy backends (lock convoys), and the service's pool
     * bounds its backends while pgbench's clients do not: the database's best figure at any concurrency
     * is the honest ceiling beside the same-concurrency one.
     */
    private void cycleCeiling() {
        if (bestCeiling > 0 && body.indexOf("pgbench's best") < 0) {
            body.append("\npgbench's best: ").append(fmt(bestCeiling)).append(" cycles/s at ").append(bestCeilingClients)
                    .append(" clients").append(cycleAt32 > 0 ? "; the service at 32 clients is "
                            + pct(cycleAt32 / bestCeiling) + " of it" : "").append(".\n\n");
        }
        if (!cycleCpu.isEmpty() && body.indexOf("### CPU") < 0) {
            body.append("### CPU while the cycle was measured\n\n")
                    .append("Cores busy (CPU seconds per second, from /proc) and CPU per cycle. The service's run: ")
                    .append("the service / PostgreSQL / the load clients; pgbench's run: PostgreSQL / pgbench.\n\n")
                    .append("| clients | service run, cores | service run, ms per cycle | pgbench run, cores | ")
                    .append("pgbench run, ms per cycle |\n|---|---|---|---|---|\n")
                    .append(cycleCpu).append('\n');
        }
    }

    void renew(int clients, int leases, HttpLoad.Window http, Pgbench.Result db) {
        endTable();
        double ratio = db == null ? Double.NaN : http.perSecond() / db.tps();
        long failed = db == null ? 0 : db.failed();
        body.append("## Renew: ").append(leases).append(" active leases renewed by ").append(clients)
                .append(" clients\n\n")
                .append("| renewals/s | pgbench renewals/s | ratio | p50 | p99 | p99.9 | pgbench p50 | pgbench p99 | errors |\n")
                .append("|---|---|---|---|---|---|---|---|---|\n")
                .append(row(fmt(http.perSecond()), db == null ? "-" : fmt(db.tps()), pct(ratio), ms(http, "renew", 50),
                        ms(http, "renew", 99), ms(http, "renew", 99.9), db == null ? "-" : fmt(db.millis(50)),
                        db == null ? "-" : fmt(db.millis(99)), http.errors() + failed))
                .append("\npgbench's renew picks its lease with one extra indexed SELECT the service does not run.\n\n");
        count(http.errors() + failed);
    }

    /**
     * The service beside etcd, one workload and concurrency: its figure as a ratio of etcd's, with the same
     * clients. Rows are kept apart and written in a section of their own at the end.
     */
    void besideEtcd(String workload, int clients, String version, HttpLoad.Window service, HttpLoad.Window etcd) {
        if (besideEtcd.isEmpty()) {
            besideEtcd.append("## Beside etcd\n\n").append(version).append(", one member, fsync on (etcd's default), ")
                    .append("on loopback, driven through its JSON gateway by the same clients as the service ")
                    .append("(one HTTP/1.1 connection each), right after the service's own measurement. Cycle: each ")
                    .append("client's keys are its own share of ").append(flags.keys()).append(", as in the service's ")
                    .append("cycle; a transaction putting the key with the client's lease if it does not exist, then ")
                    .append("a delete. Renew: `/v3/lease/keepalive` of a random one of as many leases as the ")
                    .append("service's renew has; etcd keeps lease expiry in memory only, so a keep-alive writes ")
                    .append("nothing to disk, where the service's renew commits a row and an audit event.\n\n")
                    .append("| workload | clients | the service, /s | etcd, /s | the service ÷ etcd | the service's p99 | ")
                    .append("etcd's p99 | etcd run, cores: etcd / clients | etcd errors |\n")
                    .append("|---|---|---|---|---|---|---|---|---|\n");
        }
        String operation = workload.equals("cycle") ? "cycle" : "renew";
        double ratio = service.perSecond() / etcd.perSecond();
        besideEtcd.append(row(workload, clients, fmt(service.perSecond()), fmt(etcd.perSecond()),
                String.format(Locale.ROOT, "%.2f×", ratio), ms(service, operation, 99), ms(etcd, operation, 99),
                fmt(etcd.cpu().service()) + " / " + fmt(etcd.cpu().clients()), etcd.errors()));
        count(etcd.errors());
        if (workload.equals("cycle") && (clients == 8 || clients == 32)) {
            target("Cycle throughput at " + clients + " clients at least 1.0× etcd's", ratio >= 1.0,
                    String.format(Locale.ROOT, "%.2f×", ratio) + " (" + fmt(service.perSecond()) + " vs "
                            + fmt(etcd.perSecond()) + " cycles/s)");
        }
    }

    /**
     * A workload with wrk for both sides: units per second of each, their ratio, wrk's request p99 of each, and the CPU
     * per unit of every process (the generator's included), with the targets of the cycle at 8 and 32 clients.
     */
    void wrk(String workload, int clients, String version, Wrk.Result service, Wrk.Result etcd) {
        if (wrk.isEmpty()) {
            wrk.append("## wrk, the same generator for both\n\n").append("wrk ").append("(one connection per thread, ")
                    .append("a Lua script of src/bench/wrk per workload) drives the service, with its limits as the ")
                    .append("run has them, and then ").append(version).append(" (one member, fsync on, its JSON ")
                    .append("gateway) with the same clients. Cycle: an acquire and its release on a key of the ")
                    .append("client's own share of ").append(flags.keys()).append(" (etcd: a put-if-absent under the ")
                    .append("client's lease, then a delete). Renew: a random one of ").append(flags.renewLeases())
                    .append(" active leases (etcd: a keep-alive, which etcd answers from memory, writing nothing). ")
                    .append("Hot key: a waiting acquire (`waitSeconds` 30) and its release (etcd: its lock service's ")
                    .append("lock and unlock). CPU per unit in ms: the service + PostgreSQL (etcd) + wrk. p99: of ")
                    .append("every request wrk sent (a cycle is two).\n\n")
                    .append("| workload | clients | the service, /s | etcd, /s | the service ÷ etcd | the service's p99 | ")
                    .append("etcd's p99 | CPU per unit: the service + PostgreSQL + wrk | CPU per unit: etcd + wrk | ")
                    .append("errors: the service / etcd | first unexpected answer |\n")
                    .append("|---|---|---|---|---|---|---|---|---|---|---|\n");
        }
        double ratio = service.perSecond() / etcd.perSecond();
        String first = !service.firstUnexpected().isEmpty() ? service.firstUnexpected() : etcd.firstUnexpected();
        wrk.append(row(workload, clients, fmt(service.perSecond()), fmt(etcd.perSecond()),
                String.format(Locale.ROOT, "%.2f×", ratio), fmt(service.p99()), fmt(etcd.p99()),
                fmt(service.millisPer(service.cores().service())) + " + " + fmt(service.millisPer(service.cores().postgres()))
                        + " + " + fmt(service.millisPer(service.cores().pgbench())),
                fmt(etcd.millisPer(etcd.cores().service())) + " + " + fmt(etcd.millisPer(etcd.cores().pgbench())),
                service.errors() + " / " + etcd.errors(), first.replace("|", "\\|")));
        count(service.errors() + etcd.errors());
        if (workload.equals("cycle") && (clients == 8 || clients == 32)) {
            target("wrk: the cycle at " + clients + " clients at least 1.0× etcd's", ratio >= 1.0,
                    String.format(Locale.ROOT, "%.2f×", ratio) + " (" + fmt(service.perSecond()) + " vs "
                            + fmt(etcd.perSecond()) + " cycles/s)");
            double serviceCpu = service.millisPer(service.cores().service() + service.cores().postgres());
            double etcdCpu = etcd.millisPer(etcd.cores().service());
            target("wrk: the service and PostgreSQL at most etcd's CPU per cycle at " + clients + " clients",
                    serviceCpu <= etcdCpu, fmt(serviceCpu) + " vs " + fmt(etcdCpu) + " ms");
        }
        if (workload.equals("renew")) {
            target("wrk: renewals at least 0.5× etcd's keep-alives", ratio >= 0.5,
                    String.format(Locale.ROOT, "%.2f×", ratio));
        }
        if (workload.equals("hot key")) {
            target("wrk: hand-overs per second at least etcd's lock at " + clients + " clients", ratio >= 1.0,
                    String.format(Locale.ROOT, "%.2f×", ratio) + " (" + fmt(service.perSecond()) + " vs "
                            + fmt(etcd.perSecond()) + "/s)");
        }
    }

    void hotKey(int clients, HttpLoad.Window http) {
        endTable();
        long handovers = http.outcomes().getOrDefault("acquire 201", 0L);
        long conflicts = http.outcomes().getOrDefault("acquire 409", 0L);
        body.append("## Hot key: ").append(clients).append(" clients after one key\n\n")
                .append("| hand-overs/s | LEASE_HELD/s | acquire p50 | acquire p99 | acquire p99.9 | release p99 | errors |\n")
                .append("|---|---|---|---|---|---|---|\n")
                .append(row(fmt(handovers / http.seconds()), fmt(conflicts / http.seconds()), ms(http, "acquire", 50),
                        ms(http, "acquire", 99), ms(http, "acquire", 99.9), ms(http, "release", 99), http.errors()))
                .append('\n');
        count(http.errors());
    }

    /** Hand-over columns: hand-overs/s, p50, p99, p99.9, mean, over 10 ms, timed, grant answered first. */
    private static List<Object> handOverCells(HandOvers.Window w) {
        return List.of(fmt(w.perSecond()), fmt(w.millis(50)), fmt(w.millis(99)), fmt(w.millis(99.9)), fmt(w.meanMillis()),
                String.format(Locale.ROOT, "%.1f%%", w.percentOver(10)),
                w.latencies().getTotalCount(), w.grantFirst());
    }

    private static final String HAND_OVER_NOTE = "A hand-over's latency is from the answer to a release (as its "
            + "client saw it: System.nanoTime when the whole answer had arrived) to the answer to the grant that "
            + "followed it, seen the same way by the next holder; grants and releases are paired in order, the lock "
            + "having one holder at a time. \"grant first\": hand-overs whose grant's answer arrived before the "
            + "release's answer, recorded as 0 ms (HandOvers says how).";

    void hotKeyWait(int clients, int instances, HttpLoad.Window http, HandOvers.Window w) {
        endTable();
        long conflicts = http.outcomes().getOrDefault("acquire 409", 0L);
        List<Object> cells = new ArrayList<>(List.of(clients, instances));
        cells.addAll(handOverCells(w));
        cells.addAll(List.of(conflicts, ms(http, "release", 50), ms(http, "release", 99),
                fmt(http.cpu().service()) + " / " + fmt(http.cpu().postgres()) + " / " + fmt(http.cpu().clients()),
                http.errors()));
        body.append("## Hot key, waiting acquires: ").append(clients).append(" clients over ").append(instances)
                .append(" instances, `waitSeconds: 30`\n\n")
                .append("| clients | instances | hand-overs/s | hand-over p50 | hand-over p99 | hand-over p99.9 | ")
                .append("hand-over mean | over 10 ms | hand-overs timed | grant first | 409s | release p50 | release p99 | ")
                .append("cores: instances / PostgreSQL / clients | errors |\n")
                .append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
                .append(row(cells.toArray()))
                .append("\nClients alternate between the instances (client i on instance i mod ").append(instances)
                .append("); each acquires the key with `waitSeconds: 30`, releases it at once on a 201, and acquires ")
                .append("again on a 409. ").append(HAND_OVER_NOTE).append("\n\n");
        count(http.errors());
    }

    void etcdHotKey(int clients, String version, HttpLoad.Window http, HandOvers.Window w) {
        if (body.indexOf("## etcd's lock") < 0) {
            endTable();
            body.append("## etcd's lock on one key\n\n")
                    .append(version).append("; one member, fsync on (etcd's default), data in a temporary directory, ")
                    .append("listening on 127.0.0.1 only. Driven through its JSON gateway over HTTP/1.1 (a ")
                    .append("connection per client): each client grants itself a lease once (`/v3/lease/grant`, a ")
                    .append("TTL longer than the workload), then loops `/v3/lock/lock` on one name with its lease ")
                    .append("(answered when the lock is the client's) and `/v3/lock/unlock` with the key it ")
                    .append("answered. ").append(HAND_OVER_NOTE).append("\n\n")
                    .append("| clients | hand-overs/s | hand-over p50 | hand-over p99 | hand-over p99.9 | hand-over mean | ")
                    .append("over 10 ms | hand-overs timed | grant first | unlock p50 | unlock p99 | cores: etcd / clients | ")
                    .append("errors |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        }
        List<Object> cells = new ArrayList<>(List.of(clients));
        cells.addAll(handOverCells(w));
        cells.addAll(List.of(ms(http, "unlock", 50), ms(http, "unlock", 99),
                fmt(http.cpu().service()) + " / " + fmt(http.cpu().clients()), http.errors()));
        body.append(row(cells.toArray()));
        count(http.errors());
    }

    /** {@code serverP99}: the service's own p99 of B's requests (a bucket bound), quiet and during the flood. */
    void tenantFlood(int quietClients, int floodClients, int rate, HttpLoad.Window quiet, HttpLoad.Window flooded,
                     HttpLoad.Window flood, double[] serverP99) {
        endTable();
        double ratio = flooded.millis("cycle", 99) / quiet.millis("cycle", 99);
        long refused = flood.outcomes().getOrDefault("flood acquire 429", 0L)
                + flood.outcomes().getOrDefault("flood release 429", 0L);
        body.append("## Tenant flood: tenant B's cycle, alone and while tenant A floods the same instance\n\n")
                .append("Tenant B: ").append(quietClients).append(" clients running the cycle, each at most 20 a second. Tenant A: ")
                .append(floodClients).append(" clients running the cycle on keys of their own, each waiting 1 s ")
                .append("after a 429. The instance: `leasekeeper.limits.requests-per-second-per-tenant=").append(rate)
                .append("` and `request-burst-per-tenant=").append(rate)
                .append("`, and the default sharing of its request slots (the pool's size, shared fairly among the ")
                .append("tenants asking).\n\n")
                .append("| | B cycles/s | B cycle p50 | B cycle p99 | B cycle p99.9 | A cycles/s | A 429s/s | A 409s/s ")
                .append("| A acquire p99 | cores busy: service / PostgreSQL / clients | errors |\n")
                .append("|---|---|---|---|---|---|---|---|---|---|---|\n")
                .append(row("B alone", fmt(quiet.perSecond()), ms(quiet, "cycle", 50), ms(quiet, "cycle", 99),
                        ms(quiet, "cycle", 99.9), "-", "-", "-", "-", cores(quiet.cpu()), quiet.errors()))
                .append(row("B while A floods", fmt(flooded.perSecond()), ms(flooded, "cycle", 50),
                        ms(flooded, "cycle", 99), ms(flooded, "cycle", 99.9),
                        fmt(flood.outcomes().getOrDefault("flood release 200", 0L) / flood.seconds()),
                        fmt(refused / flood.seconds()),
                        fmt(flood.outcomes().getOrDefault("flood acquire 409", 0L) / flood.seconds()),
                        ms(flood, "flood acquire", 99), cores(flooded.cpu()), flooded.errors() + flood.errors()))
                .append("\nThe service's own timing of B's requests (`leasekeeper_operation_seconds`, tenant-tagged; its ")
                .append("buckets are 1, 2, 5, 10, 25, 50, 100 ms …), p99 at most: ").append(fmt(serverP99[0]))
                .append(" ms alone, ").append(fmt(serverP99[1])).append(" ms while A floods (a cycle is two requests).\n\n");
        target("tenant B's cycle p99 while tenant A floods, at most 2x its quiet value", ratio <= 2,
                fmt(ratio) + "x (" + ms(flooded, "cycle", 99) + " ms against " + ms(quiet, "cycle", 99) + " ms)");
        count(quiet.errors() + flooded.errors() + flood.errors());
    }

    /**
     * The rows of the audit and lease tables, the partitions of the first, and how long ago the oldest event's lease
     * and the oldest lease were acquired, at a time into the run.
     */
    record TableSize(double seconds, long events, long leases, long partitions, double oldestEvent, double oldestLease) {
    }

    void retention(int clients, HttpLoad.Window run, List<TableSize> sizes) {
        endTable();
        // A lease acquired at t is retired by t + cap + retention + one interval (and the batches' time); its events
        // with its partition, up to a partition's width later. In rows: the cycle's rate times those spans.
        Duration leasesKept = Bench.RETENTION_LIFETIME_CAP.plus(Bench.RETENTION).plus(Bench.RETENTION_INTERVAL);
        Duration eventsKept = leasesKept.plus(Bench.RETENTION_PARTITION);
        // The tables fill for eventsKept after the start; from then on they must stay within their bounds.
        List<TableSize> steady = sizes.stream().filter(s -> s.seconds() > eventsKept.toSeconds()).toList();
        double oldestEvent = steady.stream().mapToDouble(TableSize::oldestEvent).max().orElse(Double.NaN);
        double oldestLease = steady.stream().mapToDouble(TableSize::oldestLease).max().orElse(Double.NaN);
        long maxEvents = steady.stream().mapToLong(TableSize::events).max().orElse(-1);
        long maxLeases = steady.stream().mapToLong(TableSize::leases).max().orElse(-1);
        body.append("## Retention: the cycle at full rate for ").append(Math.round(run.seconds()))
                .append(" s, leases kept 30 s after they end\n\n")
                .append(clients).append(" clients run the cycle as fast as they can, ").append(fmt(run.perSecond()))
                .append(" cycles/s on average; each cycle writes a lease and two events. The instance, on a database ")
                .append("of its own: `leasekeeper.lease.max-lifetime-cap=30s`, `leasekeeper.audit.retention=30s`, ")
                .append("`partition-width=10s`, `cleanup-interval=5s`. So a lease row is at most ")
                .append(leasesKept.toSeconds()).append(" s old (acquisition + cap + retention + one interval), an ")
                .append("event's lease at most ").append(eventsKept.toSeconds())
                .append(" s (one partition's width more), once the first leases are past their retention, after ")
                .append(eventsKept.toSeconds()).append(" s. At the average rate that is about ")
                .append(Math.round(2 * run.perSecond() * eventsKept.toSeconds())).append(" events and ")
                .append(Math.round(run.perSecond() * leasesKept.toSeconds())).append(" leases.\n\n")
                .append("| seconds into the run | `lease_event` rows | oldest event's lease, s | `lease` rows | ")
                .append("oldest lease, s | partitions |\n|---|---|---|---|---|---|\n");
        for (TableSize size : sizes) {
            body.append(row(fmt(size.seconds()), size.events(), fmt(size.oldestEvent()), size.leases(),
                    fmt(size.oldestLease()), size.partitions()));
        }
        body.append("\nAfter the first ").append(eventsKept.toSeconds()).append(" s: at most ").append(maxEvents)
                .append(" events and ").append(maxLeases).append(" leases.\n\n");
        count(run.errors());
        // One second of slack: a run of the job takes time, and samples fall between runs.
        target("lease_event holds no lease acquired more than " + eventsKept.toSeconds() + " s ago, for the run's last "
                        + Math.round(run.seconds() - eventsKept.toSeconds()) + " s at the cycle's full rate",
                !steady.isEmpty() && oldestEvent <= eventsKept.toSeconds() + 1, "at most " + fmt(oldestEvent) + " s");
        target("lease holds no lease acquired more than " + leasesKept.toSeconds() + " s ago, likewise",
                !steady.isEmpty() && oldestLease <= leasesKept.toSeconds() + 1, "at most " + fmt(oldestLease) + " s");
    }

    private static String cores(CpuUse.Cores cpu) {
        return fmt(cpu.service()) + " / " + fmt(cpu.postgres()) + " / " + fmt(cpu.clients());
    }

    void scale(int clients, HttpLoad.Window small, HttpLoad.Window large, Duration seeding) {
        endTable();
        double ratio = large.millis("acquire", 99) / small.millis("acquire", 99);
        body.append("## Scale: the cycle at ").append(clients).append(" clients beside other active leases\n\n")
                .append("| other active leases | cycles/s | acquire p50 | acquire p99 | acquire p99.9 | cycle p99 | errors |\n")
                .append("|---|---|---|---|---|---|---|\n")
                .append(row(flags.scaleSmall(), fmt(small.perSecond()), ms(small, "acquire", 50), ms(small, "acquire", 99),
                        ms(small, "acquire", 99.9), ms(small, "cycle", 99), small.errors()))
                .append(row(flags.scaleLarge(), fmt(large.perSecond()), ms(large, "acquire", 50), ms(large, "acquire", 99),
                        ms(large, "acquire", 99.9), ms(large, "cycle", 99), large.errors()))
                .append("\nSeeding ").append(flags.scaleLarge()).append(" leases with their keys and events took ")
                .append(seeding.toSeconds()).append(" s.\n\n");
        count(small.errors() + large.errors());
        target("p99 acquire at " + flags.scaleLarge() + " active leases within 1.5x of " + flags.scaleSmall(),
                ratio <= 1.5, fmt(ratio) + "x (" + ms(large, "acquire", 99) + " vs " + ms(small, "acquire", 99) + " ms)");
    }

    void massExpiry(int clients, int leases, long unsweptAtExpiry, Duration sweep, long left,
                    HttpLoad.Window before, HttpLoad.Window during) {
        endTable();
        double ratio = during.millis("cycle", 99) / before.millis("cycle", 99);
        body.append("## Mass expiry: ").append(leases).append(" leases expiring at one instant, the cycle at ")
                .append(clients).append(" clients meanwhile\n\n")
                .append("| window | seconds | cycles/s | acquire p99 | cycle p50 | cycle p99 | errors |\n")
                .append("|---|---|---|---|---|---|---|\n")
                .append(row("before the expiry", fmt(before.seconds()), fmt(before.perSecond()), ms(before, "acquire", 99),
                        ms(before, "cycle", 50), ms(before, "cycle", 99), before.errors()))
                .append(row("until all are expired", fmt(during.seconds()), fmt(during.perSecond()),
                        ms(during, "acquire", 99), ms(during, "cycle", 50), ms(during, "cycle", 99), during.errors()))
                .append("\nAll ").append(leases).append(" marked `expired` ").append(fmt(sweep.toMillis() / 1000.0))
                .append(" s after their expiry instant (").append(unsweptAtExpiry).append(" unswept at the instant, ")
                .append(left).append(" left at the end).\n\n");
        count(before.errors() + during.errors());
        target("Mass expiry of " + leases + " complete within 10 s", left == 0 && sweep.toMillis() <= 10_000,
                fmt(sweep.toMillis() / 1000.0) + " s");
        target("Cycle p99 during the mass expiry at most 2x its value before", ratio <= 2,
                fmt(ratio) + "x (" + ms(during, "cycle", 99) + " vs " + ms(before, "cycle", 99) + " ms)");
    }

    String markdown() {
        endTable();
        StringBuilder all = new StringBuilder(body);
        if (!besideEtcd.isEmpty()) {
            all.append(besideEtcd).append('\n');
        }
        if (!wrk.isEmpty()) {
            all.append(wrk).append('\n');
        }
        all.append("## Targets\n\n");
        targets.forEach(t -> all.append("- ").append(t).append('\n'));
        all.append("- ").append(errors == 0 ? "MET" : "NOT MET").append(": zero errors (").append(errors).append(")\n");
        if (bestCeiling > 0 && cycleAt32 > 0) {
            all.append("- Beside the target: the cycle at 32 clients is ").append(pct(cycleAt32 / bestCeiling))
                    .append(" of pgbench's best at any concurrency (").append(fmt(bestCeiling)).append(" cycles/s at ")
                    .append(bestCeilingClients).append(" clients)\n");
        }
        return all.toString();
    }

    /**
     * One comparison of the sharing workload: the cycle on the instance with the default limits beside the same
     * clients on the one with the limits off, a row per round (the instances alternating), and the target that the
     * defaults hold within 10% of it, on the median of the rounds' ratios.
     */
    void sharing(String what, List<HttpLoad.Window> defaults, List<HttpLoad.Window> limitsOff) {
        if (body.indexOf("## Sharing an instance") < 0) {
            endTable();
            body.append("## Sharing an instance: the cycle with the default limits beside the limits off\n\n")
                    .append("Each comparison in rounds, the instance with the limits off first in each.\n\n")
                    .append("| clients | round | defaults cycles/s | limits off cycles/s | ratio | defaults acquire p99 | ")
                    .append("limits off acquire p99 | defaults 429s | cores busy (defaults): service / PostgreSQL / clients ")
                    .append("| errors |\n|---|---|---|---|---|---|---|---|---|---|\n");
        }
        List<Double> ratios = new ArrayList<>();
        for (int round = 0; round < defaults.size(); round++) {
            HttpLoad.Window on = defaults.get(round);
            HttpLoad.Window off = limitsOff.get(round);
            double ratio = on.perSecond() / off.perSecond();
            ratios.add(ratio);
            long refused = on.outcomes().entrySet().stream().filter(e -> e.getKey().endsWith(" 429"))
                    .mapToLong(java.util.Map.Entry::getValue).sum();
            body.append(row(what, round + 1, fmt(on.perSecond()), fmt(off.perSecond()), pct(ratio),
                    ms(on, "acquire", 99), ms(off, "acquire", 99), refused, cores(on.cpu()), on.errors() + off.errors()));
            count(on.errors() + off.errors());
        }
        List<Double> sorted = ratios.stream().sorted().toList();
        double median = sorted.get(sorted.size() / 2);
        target("Sharing: " + what + " with the default limits within 10% of the limits off (median of "
                + ratios.size() + " rounds)", median >= 0.9, pct(median) + " (rounds: "
                + ratios.stream().map(Report::pct).collect(java.util.stream.Collectors.joining(", ")) + ")");
    }

    private void target(String what, boolean met, String measured) {
        targets.add((met ? "MET" : "NOT MET") + ": " + what + ": " + measured);
    }

    private void count(long more) {
        errors += more;
    }

    private void endTable() {
        if (body.length() > 0 && body.charAt(body.length() - 1) == '\n' && body.charAt(body.length() - 2) == '|') {
            body.append('\n');
            cycleCeiling();
        }
    }

    private static String row(Object... cells) {
        StringBuilder row = new StringBuilder("|");
        for (Object cell : cells) {
            row.append(' ').append(cell).append(" |");
        }
        return row.append('\n').toString();
    }

    private static String ms(HttpLoad.Window window, String operation, double percentile) {
        return fmt(window.millis(operation, percentile));
    }

    private static String fmt(double value) {
        return String.format(Locale.ROOT, value >= 100 ? "%.0f" : "%.2f", value);
    }

    private static String pct(double ratio) {
        return String.format(Locale.ROOT, "%.0f%%", ratio * 100);
    }
}
