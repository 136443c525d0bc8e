package io.leasekeeper.bench;

import io.leasekeeper.audit.AuditLog;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.HdrHistogram.Histogram;

/**
 * The database's ceiling: pgbench running the service's own statements, read from the service's classes
 * (LeaseStore, AuditLog) so that they cannot drift, in the transactions the service makes of them.
 * Parameters that are constant in a workload (tenant, actor, TTL, …) are inlined as literals; those that
 * change are pgbench variables, and values the service reads back (the key's id, the database time, the
 * new lease's id and token) are carried from statement to statement with {@code \gset}, as the service
 * carries them in Java.
 */
final class Pgbench {

    record Result(double tps, Histogram latencies, long failed) {

        double millis(double percentile) {
            return latencies.getValueAtPercentile(percentile) / 1e3;
        }
    }

    static final String TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
    private static final Pattern PARAMETER = Pattern.compile("(?<![:\\w]):(\\w+)");
    static final String BIN = System.getProperty("pgbench", "/usr/lib/postgresql/15/bin/pgbench");

    private final Database database;
    private final Path dir;

    Pgbench(Database database, Path dir) {
        this.database = database;
        this.dir = dir;
    }

    /** Acquire then release, as POST /v1/leases and POST …/release do, on a key of the client's own range. */
    static String cycleScript(int keysPerClient) {
        return "\\set target :client_id * " + keysPerClient + " + random(0, " + (keysPerClient - 1) + ")\n"
                + acquire() + release();
    }

    /** Renew of a lease picked by number: the one statement the service does not run (pgbench has no strings). */
    static String renewScript(int leases) {
        return "\\set n random(1, " + leases + ")\n"
                + "SELECT id AS lease_id FROM bench_lease WHERE n = :n \\gset\n"
                + "BEGIN;\n"
                + lockedLease()
                + statement(store("RENEW"), Map.of("now", ":cur_now", "ttl", "30", "leaseId", ":lease_id"), "renewed_")
                + audit("RENEWED", "'active'", "'active'", ":renewed_fencing_token", ":cur_now",
                        "'{\"previousExpiresAt\": \"2026-01-01T00:00:00Z\", \"expiresAt\": \"2026-01-01T00:00:30Z\", \"ttlSeconds\": 30}'")
                + "COMMIT;\n";
    }

    private static String acquire() {
        Map<String, String> key = Map.of("tenant", "'bench'", "program", "'default'", "targetType", "'opaque'",
                "targetValue", ":target", "actor", "'bench'", "operation", "'bench'");
        return "BEGIN;\n"
                + statement(store("INSERT_KEY_IF_ABSENT"), key, null)
                + statement(store("LOCK_KEY"), key, "key_")
                + statement(store("ACTIVE_OF_KEY"), Map.of("keyId", ":key_id"), "active_")
                + statement(store("INSERT_ACTIVE"), Map.ofEntries(Map.entry("keyId", ":key_id"),
                        Map.entry("tenant", "'bench'"), Map.entry("owner", "'bench'"), Map.entry("holder", "'pgbench'"),
                        Map.entry("now", ":active_now"), Map.entry("ttl", "30"), Map.entry("maxLifetime", "86400"),
                        Map.entry("jobId", "'bench-job'"), Map.entry("traceId", "'" + TRACE_ID + "'"),
                        Map.entry("metadata", "'{}'")), "lease_")
                + audit("ACQUIRED", "NULL", "'active'", ":lease_fencing_token", ":active_now",
                        "'{\"expiresAt\": \"2026-01-01T00:00:30Z\", \"ttlSeconds\": 30}'")
                + "COMMIT;\n";
    }

    private static String release() {
        return "BEGIN;\n"
                + lockedLease()
                + statement(store("END"), Map.of("state", "'released'", "now", ":cur_now", "reason", "'released'",
                        "leaseId", ":lease_id"), "ended_")
                + audit("RELEASED", "'active'", "'released'", ":ended_fencing_token", ":cur_now", "'{}'")
                + "COMMIT;\n";
    }

    /** The key lock and the read of the lease under it, as every operation on a lease id starts. */
    private static String lockedLease() {
        Map<String, String> lease = Map.of("leaseId", ":lease_id", "tenant", "'bench'");
        return statement(store("LOCK_KEY_OF_LEASE"), lease, "lock_") + statement(store("BY_ID"), lease, "cur_");
    }

    private static String audit(String type, String from, String to, String token, String at, String details) {
        return statement(sql(AuditLog.class, "INSERT"), Map.ofEntries(Map.entry("leaseId", ":lease_id"),
                Map.entry("type", "'" + type + "'"), Map.entry("fromState", from), Map.entry("toState", to),
                Map.entry("fencingToken", token), Map.entry("at", at), Map.entry("principal", "'bench'"),
                Map.entry("requestId", "NULL"), Map.entry("traceId", "'" + TRACE_ID + "'"),
                Map.entry("details", details)), null);
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
            return sql(Class.forName("io.leasekeeper.lease.LeaseStore"), field);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String sql(Class<?> owner, String field) {
        try {
            Field f = owner.getDeclaredField(field);
            f.setAccessible(true);
            return (String) f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("the service has no SQL " + owner.getSimpleName() + "." + field, e);
        }
    }

    /** Runs the script with that many clients: a warm-up, then a measured run whose every transaction is logged. */
    Result run(String name, String script, int clients, Duration warmup, Duration duration) throws IOException, InterruptedException {
        Path file = dir.resolve(name + ".sql");
        Files.createDirectories(dir);
        Files.writeString(file, script);
        List<String> common = new ArrayList<>(List.of(BIN, "-n", "-M", "prepared", "-c", String.valueOf(clients),
                "-j", String.valueOf(Math.min(clients, 2)), "-f", file.toString()));
        common.addAll(database.pgbenchConnection());
        exec(withArgs(common, "-T", String.valueOf(Math.max(1, warmup.toSeconds()))));
        Path logs = Files.createDirectories(dir.resolve(name + "-log"));
        try (Stream<Path> old = Files.list(logs)) {
            for (Path log : old.toList()) {
                Files.delete(log); // an earlier run's transactions
            }
        }
        String out = exec(withArgs(common, "-T", String.valueOf(duration.toSeconds()), "--log",
                "--log-prefix=" + logs.resolve("tx")));
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
        return new Result(Double.parseDouble(tps.group(1)), latencies, failed.find() ? Long.parseLong(failed.group(1)) : 0);
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
