package io.leasekeeper.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntFunction;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Clients calling the service over HTTP as fast as they can, one virtual thread each, each with its
 * own unit of work (a cycle, a renewal, a try for the hot key). Latencies go to HdrHistogram recorders
 * per operation; {@link #measure()} takes what was recorded since the last call. With several ports
 * (instances), client i calls the (i mod n)-th; without a token (etcd) no Authorization header is sent.
 */
final class HttpLoad implements AutoCloseable {

    /** One unit of a client's work; it calls the service through {@link Calls}. */
    interface Unit {
        void run(int client, Calls calls) throws Exception;
    }

    /** What a measured window saw. */
    /** {@code cpu}: the machine's CPU by process group over the window. */
    record Window(double seconds, long units, Map<String, Histogram> latencies, Map<String, Long> outcomes, long errors,
                  CpuUse.Cores cpu) {

        double perSecond() {
            return units / seconds;
        }

        double millis(String operation, double percentile) {
            Histogram h = latencies.get(operation);
            return h == null ? Double.NaN : h.getValueAtPercentile(percentile) / 1e6;
        }
    }

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();

    private final List<String> bases;
    /** Each client's bearer token (null: none). */
    private final IntFunction<String> tokens;
    private final Duration timeout;
    private final Map<String, Recorder> recorders = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> outcomes = new ConcurrentHashMap<>();
    private final LongAdder units = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean running = true;
    private volatile long windowStart = System.nanoTime();

    private final CpuUse cpu;

    private HttpLoad(List<String> bases, IntFunction<String> tokens, Duration timeout, CpuUse cpu) {
        this.bases = bases;
        this.cpu = cpu;
        this.tokens = tokens;
        this.timeout = timeout;
    }

    static HttpLoad start(int port, String token, int clients, Unit unit, CpuUse cpu) throws IOException {
        return start(List.of(port), token, Duration.ofSeconds(30), clients, unit, cpu);
    }

    /** {@code token}: null for none; {@code timeout}: of each request, from its send to its whole answer. */
    static HttpLoad start(List<Integer> ports, String token, Duration timeout, int clients, Unit unit, CpuUse cpu)
            throws IOException {
        return startPerClient(ports, client -> token, timeout, clients, unit, cpu);
    }

    /** Each client with a token of its own ({@code tokens} of the client's number): clients of several tenants. */
    static HttpLoad startPerClient(List<Integer> ports, IntFunction<String> tokens, Duration timeout, int clients, Unit unit,
                                   CpuUse cpu) throws IOException {
        HttpLoad load = new HttpLoad(ports.stream().map(port -> "http://127.0.0.1:" + port).toList(), tokens, timeout, cpu);
        cpu.start();
        for (int i = 0; i < clients; i++) {
            int client = i;
            load.threads.add(Thread.ofVirtual().name("client-" + i).start(() -> load.loop(client, unit)));
        }
        return load;
    }

    private void loop(int client, Unit unit) {
        Calls calls = new Calls(bases.get(client % bases.size()), tokens.apply(client));
        while (running) {
            try {
                unit.run(client, calls);
                units.increment();
            } catch (Exception e) {
                errors.increment();
                outcomes.computeIfAbsent("error " + e.getClass().getSimpleName(), k -> new LongAdder()).increment();
            }
        }
    }

    /** Everything recorded since the previous call (or the start). */
    Window measure() throws IOException {
        CpuUse.Cores cores = cpu.stop();
        cpu.start();
        long now = System.nanoTime();
        double seconds = (now - windowStart) / 1e9;
        windowStart = now;
        Map<String, Histogram> latencies = new TreeMap<>();
        recorders.forEach((operation, recorder) -> latencies.put(operation, recorder.getIntervalHistogram()));
        Map<String, Long> counted = new TreeMap<>();
        outcomes.forEach((outcome, count) -> counted.put(outcome, count.sumThenReset()));
        return new Window(seconds, units.sumThenReset(), latencies, counted, errors.sumThenReset(), cores);
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        for (Thread thread : threads) {
            thread.join();
        }
    }

    /** One POST outside any load (a probe): its status, body, and the instant its whole answer had arrived. */
    static Calls.Answer post(int port, String token, Duration timeout, String path, String json)
            throws IOException, InterruptedException {
        HttpResponse<byte[]> response = HTTP.send(request("http://127.0.0.1:" + port, token, timeout, path, json),
                HttpResponse.BodyHandlers.ofByteArray());
        long answeredAt = System.nanoTime();
        return new Calls.Answer(response.statusCode(), body(response), answeredAt);
    }

    private static HttpRequest request(String base, String token, Duration timeout, String path, String json) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
                .header("Content-Type", "application/json").timeout(timeout)
                .POST(HttpRequest.BodyPublishers.ofString(json));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return request.build();
    }

    private static JsonNode body(HttpResponse<byte[]> response) {
        try {
            return JSON.readTree(response.body());
        } catch (RuntimeException notJson) {
            return JSON.getNodeFactory().textNode(new String(response.body()));
        }
    }

    /** A client's calls: each timed under its operation's name, its outcome counted by status. */
    final class Calls {

        /** {@code answeredAt}: {@link System#nanoTime()} when the whole answer had arrived. */
        record Answer(int status, JsonNode body, long answeredAt) {
        }

        private final String base;
        private final String token;

        Calls(String base, String token) {
            this.base = base;
            this.token = token;
        }

        Answer post(String operation, String path, String json, int... expected) throws IOException, InterruptedException {
            HttpRequest request = request(base, token, timeout, path, json);
            long start = System.nanoTime();
            HttpResponse<byte[]> response = HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
            long answeredAt = System.nanoTime();
            recorders.computeIfAbsent(operation, k -> new Recorder(3)).recordValue(answeredAt - start);
            outcomes.computeIfAbsent(operation + " " + response.statusCode(), k -> new LongAdder()).increment();
            for (int status : expected) {
                if (response.statusCode() == status) {
                    return new Answer(status, JSON.readTree(response.body()), answeredAt);
                }
            }
            throw new IllegalStateException(operation + " answered " + response.statusCode() + ": "
                    + new String(response.body()));
        }

        void time(String operation, long startNanos) {
            recorders.computeIfAbsent(operation, k -> new Recorder(3)).recordValue(System.nanoTime() - startNanos);
        }
    }
}
