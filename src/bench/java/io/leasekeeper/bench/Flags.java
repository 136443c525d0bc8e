package io.leasekeeper.bench;

import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The benchmark's settings, from {@code --name=value} flags; every flag has a default. */
record Flags(String jdbcUrl, List<String> workloads, List<Integer> clients, Duration jit, Duration warmup, Duration duration,
             int keys, int renewLeases, int scaleSmall, int scaleLarge, int expiryLeases, int poolSize,
             boolean ceiling, boolean etcdBeside, List<String> serviceArgs, List<String> serviceJvm, String report, String etcd, String etcdDir,
             List<Integer> etcdClients, Duration retentionRun, int floodRate, boolean limitsOff) {

    /** Workloads of the service (they need it started); the others need no service. */
    static final List<String> SERVICE_WORKLOADS = List.of("cycle", "renew", "hotkey", "scale", "expiry", "hotkey-wait",
            "tenant-flood", "retention", "sharing", "wrk-cycle", "wrk-renew", "wrk-hotkey");
    static final List<String> WORKLOADS = List.of("cycle", "renew", "hotkey", "scale", "expiry", "hotkey-wait",
            "tenant-flood", "retention", "sharing", "etcd-hotkey", "wrk-cycle", "wrk-renew", "wrk-hotkey");

    static final String USAGE = """
            --jdbc-url=URL          PostgreSQL for the service and pgbench (required; src/bench/run makes one)
            --workloads=LIST        cycle,renew,hotkey,scale,expiry (the default), and also hotkey-wait (waiting
                                    acquires over two instances; needs the server's waitSeconds), tenant-flood
                                    (one tenant's cycle alone, then while another floods the instance),
                                    retention (the cycle at full rate with a short retention, for
                                    --retention-run), sharing (the cycle with the default limits beside the
                                    limits off, of one tenant and of 32), etcd-hotkey (etcd's lock on one key; needs etcd, which src/bench/run installs)
                                    and wrk-cycle, wrk-renew, wrk-hotkey (the cycle at each --clients, the renewals at 32
                                    clients, the hot key at 64, with wrk driving the service and then etcd; src/bench/run
                                    installs both)
            --clients=LIST          concurrent clients of the cycle workload (default 1,8,32,64)
            --jit=DURATION          the service's warm-up once at start, until its JIT has compiled (default 60s)
            --warmup=DURATION       before each measurement (default 5s)
            --duration=DURATION     of each measurement (default 15s)
            --keys=N                keys of the cycle workload (default 10000)
            --renew-leases=N        active leases of the renew workload (default 10000)
            --scale=SMALL,LARGE     other active leases of the scale workload (default 1000,1000000)
            --expiry-leases=N       leases expiring at once in the mass-expiry workload (default 100000)
            --pool-size=N           the service's database connections (default 16)
            --ceiling=BOOL          run pgbench beside the HTTP figures (default true)
            --etcd-beside=BOOL      run etcd's cycle and keep-alive beside the cycle and renew workloads, with the
                                    same clients, and report the service's figures as a ratio of etcd's (default true)
            --service=ARGS          more arguments for the service, separated by ';' (default none)
            --service-jvm=ARGS      the service's JVM options, separated by ';' (default -Xmx1g)
            --report=FILE           where the Markdown report goes (default target/bench/report.md)
            --etcd=PATH             the etcd binary (default: etcd on the PATH)
            --etcd-dir=DIR          where etcd keeps its data, in a new directory each time
                                    (default: the system's temporary directory; src/bench/run gives its own)
            --etcd-clients=LIST     concurrent clients of etcd-hotkey (default 16,64)
            --retention-run=DURATION  of the retention workload (default 10m)
            --flood-rate=N          tenant-flood's per-tenant rate limit, requests a second (default 300)
            --limits=defaults|off   the service's tenant limits as they are by default (the default), or off
                                    (no bound on the requests in progress, no rate): the report says which
            """;

    static Flags parse(String[] args) {
        Map<String, String> given = new LinkedHashMap<>();
        for (String arg : args) {
            if (arg.isBlank()) {
                continue;
            }
            if (!arg.startsWith("--") || !arg.contains("=")) {
                throw new IllegalArgumentException("not a --name=value flag: " + arg + "\n" + USAGE);
            }
            given.put(arg.substring(2, arg.indexOf('=')), arg.substring(arg.indexOf('=') + 1));
        }
        String jdbcUrl = given.remove("jdbc-url");
        if (jdbcUrl == null) {
            throw new IllegalArgumentException("--jdbc-url is required\n" + USAGE);
        }
        List<String> scale = List.of(given.getOrDefault("scale", "1000,1000000").split(","));
        Flags flags = new Flags(jdbcUrl,
                List.of(given.getOrDefault("workloads", "cycle,renew,hotkey,scale,expiry").split(",")),
                Arrays.stream(given.getOrDefault("clients", "1,8,32,64").split(",")).map(Integer::valueOf).toList(),
                duration(given.getOrDefault("jit", "60s")),
                duration(given.getOrDefault("warmup", "5s")), duration(given.getOrDefault("duration", "15s")),
                Integer.parseInt(given.getOrDefault("keys", "10000")),
                Integer.parseInt(given.getOrDefault("renew-leases", "10000")),
                Integer.parseInt(scale.get(0)), Integer.parseInt(scale.get(1)),
                Integer.parseInt(given.getOrDefault("expiry-leases", "100000")),
                Integer.parseInt(given.getOrDefault("pool-size", "16")),
                Boolean.parseBoolean(given.getOrDefault("ceiling", "true")),
                Boolean.parseBoolean(given.getOrDefault("etcd-beside", "true")),
                given.containsKey("service") ? List.of(given.get("service").split(";")) : List.of(),
                List.of(given.getOrDefault("service-jvm", "-Xmx1g").split(";")),
                given.getOrDefault("report", "target/bench/report.md"),
                given.getOrDefault("etcd", "etcd"),
                given.getOrDefault("etcd-dir", System.getProperty("java.io.tmpdir")),
                Arrays.stream(given.getOrDefault("etcd-clients", "16,64").split(",")).map(Integer::valueOf).toList(),
                duration(given.getOrDefault("retention-run", "10m")),
                Integer.parseInt(given.getOrDefault("flood-rate", "300")),
                switch (given.getOrDefault("limits", "defaults")) {
                    case "defaults" -> false;
                    case "off" -> true;
                    default -> throw new IllegalArgumentException("--limits is defaults or off\n" + USAGE);
                });
        for (String known : List.of("workloads", "clients", "jit", "warmup", "duration", "keys", "renew-leases", "scale",
                "expiry-leases", "pool-size", "ceiling", "etcd-beside", "service", "service-jvm", "report", "etcd", "etcd-dir", "etcd-clients",
                "retention-run", "flood-rate", "limits")) {
            given.remove(known);
        }
        if (!given.isEmpty()) {
            throw new IllegalArgumentException("unknown flags " + given.keySet() + "\n" + USAGE);
        }
        List<String> unknown = flags.workloads().stream().filter(w -> !WORKLOADS.contains(w)).toList();
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("unknown workloads " + unknown + "\n" + USAGE);
        }
        return flags;
    }

    /** Whether any workload asked for needs the service (all but etcd-hotkey). */
    boolean needsService() {
        return workloads.stream().anyMatch(SERVICE_WORKLOADS::contains);
    }

    private static Duration duration(String text) {
        return Duration.parse("PT" + text.toUpperCase());
    }
}
