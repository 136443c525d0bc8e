package io.leasekeeper.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * wrk (Debian's package), the load generator both sides share: a C program of a few threads, light beside the
 * service's and etcd's CPU, where the Java clients took 0.4–0.7 of the two cores. One connection per thread
 * ({@code -t N -c N}), each thread one client whose requests a Lua script of {@code src/bench/wrk} chains (an acquire,
 * then its release, ...). The script's {@code done()} prints one line, {@code wrk-result {...}}, read here. The CPU of
 * the window is read by {@link CpuUse}: wrk, a child of this JVM, is counted in its {@code pgbench} column once it has
 * been waited for.
 */
final class Wrk {

    /** Where the scripts are; wrk runs there, so that a script's {@code require("common")} finds common.lua. */
    static final Path SCRIPTS = Path.of("src", "bench", "wrk");

    private static final Pattern RESULT = Pattern.compile("^wrk-result (\\{.*})$", Pattern.MULTILINE);
    private static final JsonMapper JSON = JsonMapper.builder().build();

    /**
     * What a measured run did: the workload's units (cycles, renewals, hand-overs) and the requests they took, the
     * answers the script did not expect (the first of them), socket errors, wrk's latency of every request in ms, and
     * the CPU of the window by process (wrk's in {@code cores.pgbench()}).
     */
    record Result(long units, long requests, double seconds, long unexpected, long socketErrors, double p50,
                  double p99, double p999, String firstUnexpected, CpuUse.Cores cores) {

        double perSecond() {
            return units / seconds;
        }

        long errors() {
            return unexpected + socketErrors;
        }

        /** Milliseconds of CPU per unit of what {@code cores} measures. */
        double millisPer(double cores) {
            return CpuUse.Cores.millisPer(cores, perSecond());
        }
    }

    private Wrk() {
    }

    /**
     * Runs {@code script} against {@code 127.0.0.1:port} with {@code clients} connections: {@code warmup} unmeasured,
     * then {@code duration} measured, the CPU of that window by {@code cpu}. {@code args} gives the script's
     * arguments for a phase ("warmup", "measured"): each phase names its keys apart, since wrk stops its clients
     * wherever they are, a lease or a lock held.
     */
    static Result run(String script, int port, int clients, Duration warmup, Duration duration, CpuUse cpu,
                      Function<String, List<String>> args) throws IOException, InterruptedException {
        if (!warmup.isZero()) {
            wrk(script, port, clients, warmup, args.apply("warmup"));
        }
        cpu.start();
        String out = wrk(script, port, clients, duration, args.apply("measured"));
        CpuUse.Cores cores = cpu.stop();
        Matcher result = RESULT.matcher(out);
        if (!result.find()) {
            throw new IllegalStateException("wrk printed no result for " + script + ":\n" + out);
        }
        JsonNode r = JSON.readTree(result.group(1));
        return new Result(r.get("units").asLong(), r.get("requests").asLong(), r.get("seconds").asDouble(),
                r.get("unexpected").asLong(), r.get("socketErrors").asLong(), r.get("p50").asDouble(),
                r.get("p99").asDouble(), r.get("p999").asDouble(), r.get("first").asString(), cores);
    }

    /** One run of wrk to its end; its output. A request may wait up to 40 s (a waiting acquire asks for 30). */
    private static String wrk(String script, int port, int clients, Duration duration, List<String> args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("wrk", "-t", String.valueOf(clients), "-c",
                String.valueOf(clients), "-d", duration.toSeconds() + "s", "--timeout", "40s", "-s", script,
                "http://127.0.0.1:" + port, "--"));
        command.addAll(args);
        Process wrk = new ProcessBuilder(command).directory(SCRIPTS.toFile()).redirectErrorStream(true).start();
        String out = new String(wrk.getInputStream().readAllBytes());
        int status = wrk.waitFor();
        if (status != 0) {
            throw new IllegalStateException("wrk exited with " + status + " running " + script + ":\n" + out);
        }
        return out;
    }

    /** A file of lines, for a script's {@code common.lines} (the leases a renew workload picks from). */
    static Path lines(Path file, List<String> lines) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        return Files.write(file, lines);
    }
}
