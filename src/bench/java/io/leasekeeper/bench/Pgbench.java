package io.leasekeeper.bench;

import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.HdrHistogram.Histogram;

/**
 * The database's ceiling: pgbench running the service's own statements, read from the service's class
 * (LeaseStore) so that they cannot drift, in the transactions the service makes of them.
 * Parameters that are constant in a workload are pgbench variables given on the command line (strings)
 * or literals (numbers); those that change are pgbench variables too; values the service reads back (the
 * key's id, the new lease's id and token) are carried from statement to statement with {@code \gset}, as
 * the service carries them in Java.
 */
final class Pgbench {

    /** {@code cpu}: the machine's CPU by process group during the measured run; null when not measured. */
    record Result(double tps, Histogram latencies, long failed, CpuUse.Cores cpu) {

        double millis(double percentile) {
            return latencies.getValueAtPercentile(percentile) / 1e3;
        }
    }

    static final String TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
    private static final Pattern PARAMETER = Pattern.compile("(?<![:\\w]):(\\w+)");
    static final String BIN = System.getProperty("pgbench", "/usr/lib/postgresql/15/bin/pgbench");

    private final Database database;
    private final Path dir;

    private final CpuUse cpu;

    Pgbench(Database database, Path dir) {
        this(database, dir, null);
    }

    Pgbench(Database database, Path dir, CpuUse cpu) {
        this.database = database;
        this.dir = dir;
        this.cpu = cpu;
    }

    /** Acquire then release, as POST /v1/leases and POST …/release do, on a key of the client's own range. */
    static String cycleScript(int keysPerClient) {
        return "\\set target :client_id * " + keysPerClient + " + random(0, " + (keysPerClient - 1) + ")\n"
                + acquire() + release();
    }

    /** Renew of a lease picked by number: the one statement the service does not run (pgbench has no strings). */
    static String renewScript(int leases) {
        return "\\set n random(1, " + leases + ")\n"
                + "SELECT id AS lease_id, fencing_token AS lease_fencing_token FROM bench_lease WHERE n = :n \\gset\n"
                + "BEGIN;\n"
                + statement(store("LOCK_KEY_OF_LEASE"), onLease(), "lock_")
                + statement(store("RENEW"), with(onLease(), Map.of("fencingToken", ":lease_fencing_token", "ttl", "3600")),
                        "renewed_")
                + "COMMIT;\n";
    }

    /**
     * The strings the service binds as parameters, bound here too as pgbench variables ({@code -D}), so that
     * PostgreSQL plans the same prepared statements: a literal 'bench' tenant let the planner use the
     * tenant's statistics (no leases at ANALYZE time) and lead a lookup by lease id with a tenant index,
     * a plan the service's statements never get once they are prepared.
     */
    static final Map<String, String> VARIABLES = Map.ofEntries(
            Map.entry("tenant", "bench"), Map.entry("program", "default"), Map.entry("target_type", "opaque"),
            Map.entry("actor", "bench"), Map.entry("operation", "bench"), Map.entry("principal", "bench"),
            Map.entry("holder", "pgbench"), Map.entry("job_id", "bench-job"), Map.entry("trace_id", TRACE_ID),
            Map.entry("metadata", "{}"), Map.entry("released", "released"), Map.entry("released_event", "RELEASED"),
            Map.entry("details", "{}"));

    /** The key of a cycle is made beforehand ({@link Database#reset}): the acquire locks it, then grants it. */
    private static String acquire() {
        Map<String, String> key = Map.of("tenant", ":tenant", "program", ":program", "targetType", ":target_type",
                "targetValue", ":target", "actor", ":actor", "operation", ":operation");
        return "BEGIN;\n"
                + statement(store("LOCK_KEY"), key, "key_")
                + statement(store("ACQUIRE_IF_FREE"), with(by(), Map.of("keyId", ":key_id", "tenant", ":tenant",
                        "holder", ":holder", "ttl", "30", "maxLifetime", "86400", "lockDelay", "0",
                        "jobId", ":job_id", "leaseTraceId", ":trace_id", "metadata", ":metadata")), "lease_")
                + "COMMIT;\n";
    }

    private static String release() {
        return "BEGIN;\n"
                + statement(store("LOCK_KEY_OF_LEASE"), onLease(), "lock_")
                + statement(store("END"), with(onLease(), Map.of("state", ":released", "eventType", ":released_event",
                        "reason", ":released", "fencingToken", ":lease_fencing_token", "details", ":details")), "ended_")
                + "COMMIT;\n";
    }

    /** Who makes the transition, as the service binds it for its audit event. */
    private static Map<String, String> by() {
        return Map.of("principal", ":principal", "requestId", "NULL", "traceId", ":trace_id");
    }

    private static Map<String, String> onLease() {
        return with(by(), Map.of("leaseId", ":lease_id", "tenant", ":tenant"));
    }

    private static Map<String, String> with(Map<String, String> some, Map<String, String> more) {
        Map<String, String> all = new HashMap<>(some);
        all.putAll(more);
        return all;
    }

    /** One of the service's statements with its parameters bound, ended by ; or by \gset into prefixed variables. */
    static String statement(String sql, Map<String, String> values, String gsetPrefix) {
        Matcher m = PARAMETER.matcher(sql);
        StringBuilder bound = new StringBuilder();
        while (m.find()) {
            String value = values.get(m.group(1));
            if (value == null) {
                throw new IllegalArgumentException("no value for :" + m.group(1) + " in\n" + sql);
            }
            m.appendReplacement(bound, Matcher.quoteReplacement(value));
        }
        m.appendTail(bound);
        return bound.toString().strip() + (gsetPrefix == null ? ";\n" : " \\gset " + gsetPrefix + "\n");
    }

    private static String store(String field) {
        try {
            Field f = Class.forName("io.leasekeeper.lease.LeaseStore").getDeclaredField(field);
            f.setAccessible(true);
            return (String) f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("the service has no SQL LeaseStore." + field, e);
        }
    }

    /** Runs the script with that many clients: a warm-up, then a measured run whose every transaction is logged. */
    Result run(String name, String script, int clients, Duration warmup, Duration duration) throws IOException, InterruptedException {
        Path file = dir.resolve(name + ".sql");
        Files.createDirectories(dir);
        Files.writeString(file, script);
        List<String> common = new ArrayList<>(List.of(BIN, "-n", "-M", "prepared", "-c", String.valueOf(clients),
                "-j", String.valueOf(Math.min(clients, 2)), "-f", file.toString()));
        VARIABLES.forEach((variable, value) -> common.addAll(List.of("-D", variable + "=" + value)));
        common.addAll(database.pgbenchConnection());
        exec(withArgs(common, "-T", String.valueOf(Math.max(1, warmup.toSeconds()))));
        Path logs = Files.createDirectories(dir.resolve(name + "-log"));
        try (Stream<Path> old = Files.list(logs)) {
            for (Path log : old.toList()) {
                Files.delete(log); // an earlier run's transactions
            }
        }
        if (cpu != null) {
            cpu.start();
        }
        String out = exec(withArgs(common, "-T", String.valueOf(duration.toSeconds()), "--log",
                "--log-prefix=" + logs.resolve("tx")));
        CpuUse.Cores cores = cpu == null ? null : cpu.stop();
        Matcher tps = Pattern.compile("tps = ([0-9.]+) \\(without initial connection time\\)").matcher(out);
        Matcher failed = Pattern.compile("number of failed transactions: ([0-9]+)").matcher(out);
        if (!tps.find()) {
            throw new IllegalStateException("pgbench printed no tps:\n" + out);
        }
        Histogram latencies = new Histogram(3);
        try (Stream<Path> files = Files.list(logs)) {
            for (Path log : files.toList()) {
                for (String line : Files.readAllLines(log)) {
                    // client_id transaction_no time(µs) script_no time_epoch time_us
                    latencies.recordValue(Long.parseLong(line.split(" ")[2]));
                }
            }
        }
        return new Result(Double.parseDouble(tps.group(1)), latencies, failed.find() ? Long.parseLong(failed.group(1)) : 0,
                cores);
    }

    private static List<String> withArgs(List<String> common, String... more) {
        List<String> command = new ArrayList<>(common.subList(0, common.size() - 1));
        command.addAll(List.of(more));
        command.add(common.getLast());
        return command;
    }

    private static String exec(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes());
        if (process.waitFor() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed:\n" + out);
        }
        return out;
    }
}
