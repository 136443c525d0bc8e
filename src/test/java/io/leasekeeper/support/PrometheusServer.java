package io.leasekeeper.support;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import tools.jackson.databind.JsonNode;

/**
 * A real Prometheus (Debian's {@code prometheus} package) on loopback, with a throwaway config and data
 * directory: it scrapes one target every second and loads a rules file, and is asked through its HTTP
 * API as Grafana would ask it.
 */
public final class PrometheusServer implements AutoCloseable {

    /** Where the Prometheus tools are when on PATH; empty when they are not installed. */
    public static Optional<Path> tool(String name) {
        return Stream.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
                .map(dir -> Path.of(dir, name)).filter(Files::isExecutable).findFirst();
    }

    private final Path dir;
    private final Process process;
    private final Api api;

    private PrometheusServer(Path dir, Process process, int port) {
        this.dir = dir;
        this.process = process;
        this.api = new Api(port);
    }

    /** Starts Prometheus scraping {@code /actuator/prometheus} on that port, and waits until it is ready. */
    public static PrometheusServer start(Path binary, Path rules, int scrapePort) throws IOException {
        Path dir = Files.createTempDirectory("leasekeeper-prometheus");
        Path config = dir.resolve("prometheus.yml");
        Files.writeString(config, """
                global:
                  scrape_interval: 1s
                  evaluation_interval: 1s
                rule_files:
                  - %s
                scrape_configs:
                  - job_name: leasekeeper
                    metrics_path: /actuator/prometheus
                    static_configs:
                      - targets: ["127.0.0.1:%d"]
                """.formatted(rules.toAbsolutePath(), scrapePort));
        int port = freePort();
        Process process = new ProcessBuilder(binary.toString(), "--config.file=" + config,
                "--storage.tsdb.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + port,
                "--log.level=warn")
                .redirectErrorStream(true).redirectOutput(dir.resolve("prometheus.log").toFile()).start();
        PrometheusServer server = new PrometheusServer(dir, process, port);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).ignoreExceptions()
                .until(() -> {
                    if (!process.isAlive()) {
                        throw new IllegalStateException("Prometheus exited: " + server.log());
                    }
                    return server.api.get("/-/ready", null).status() == 200;
                });
        return server;
    }

    /** An instant query: the series it returns. Fails on any error Prometheus reports. */
    public List<JsonNode> query(String promql) {
        JsonNode data = data("/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
        List<JsonNode> series = new ArrayList<>();
        data.get("result").forEach(series::add);
        return series;
    }

    /** The {@code data} of an API answer whose {@code status} is {@code success}. */
    public JsonNode data(String pathAndQuery) {
        Api.Response response = api.get(pathAndQuery, null);
        if (response.status() != 200 || !"success".equals(response.body().path("status").asString(""))) {
            throw new IllegalStateException(pathAndQuery + " answered " + response.status() + ": " + response.raw());
        }
        return response.body().get("data");
    }

    /** The scrape target's health and last error, for failure messages. */
    public String scrapeHealth() {
        JsonNode targets = data("/api/v1/targets").get("activeTargets");
        StringBuilder health = new StringBuilder();
        targets.forEach(t -> health.append(t.path("scrapeUrl").asString()).append(": ")
                .append(t.path("health").asString()).append(' ').append(t.path("lastError").asString()).append('\n'));
        return health.toString();
    }

    public String log() {
        try {
            return Files.readString(dir.resolve("prometheus.log"));
        } catch (IOException e) {
            return e.toString();
        }
    }

    @Override
    public void close() throws IOException {
        process.destroy();
        try {
            if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
