package io.leasekeeper.bench;

import java.io.IOException;
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
 * The database's ceiling: pgbench calling the service's own transitions, the functions it calls by name
 * (db/migration/R__grant_and_acquire.sql and R__renew_and_release.sql), each in autocommit as the service calls
 * them. Parameters that are constant in a workload are pgbench variables given on the command line (strings) or literals
 * (numbers); the new lease's id and token are carried from the acquire to the release with {@code \gset}, as
 * the service's client carries them.
 */
final class Pgbench {

    /** {@code cpu}: the machine's CPU by process group during the measured run; null when not measured. */
    record Result(double tps, Histogram latencies, long failed, CpuUse.Cores cpu) {

        double millis(double percentile) {
            return latencies.getValueAtPercentile(percentile) / 1e3;
        }
    }

    static final String TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
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
                + "SELECT (a.answer).id AS lease_id, (a.answer).fencing_token AS lease_fencing_token"
                + " FROM lease_acquire(:tenant, ROW(:program, :target_type, :target, :actor, :operation, :principal,"
                + " :holder, 30, 86400, 0, :job_id, :trace_id, :metadata, NULL, :trace_id, true, NULL, 'once', 0, NULL,"
                + " NULL)::lease_acquire_request, 5, NULL, 62) a \\gset\n"
                + "SELECT (answer).outcome FROM lease_end(:tenant, ROW(:lease_id, 'released', :principal,"
                + " :lease_fencing_token, 'released', NULL, :trace_id)::lease_end_request, 5, NULL);\n";
    }

    /** Renew of a lease picked by number (pgbench has no strings to pick it by). */
    static String renewScript(int leases) {
        return "\\set n random(1, " + leases + ")\n"
                + "SELECT id AS lease_id, fencing_token AS lease_fencing_token FROM bench_lease WHERE n = :n \\gset\n"
                + "SELECT outcome FROM lease_renew(:tenant, ROW(:lease_id, :principal, :lease_fencing_token, 3600, NULL,"
                + " :trace_id)::lease_renew_request);\n";
    }

    /**
     * The strings the service binds as parameters, bound here too as pgbench variables ({@code -D}), so that
     * PostgreSQL plans the statements inside the functions as it does for the service's calls.
     */
    static final Map<String, String> VARIABLES = Map.ofEntries(
            Map.entry("tenant", "bench"), Map.entry("program", "default"), Map.entry("target_type", "opaque"),
            Map.entry("actor", "bench"), Map.entry("operation", "bench"), Map.entry("principal", "bench"),
            Map.entry("holder", "pgbench"), Map.entry("job_id", "bench-job"), Map.entry("trace_id", TRACE_ID),
            Map.entry("metadata", "{}"));

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
