package io.leasekeeper.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A throwaway single-member etcd for the etcd-hotkey workload: its data in a new directory under the given
 * one (removed on close), its client and peer URLs on free loopback ports and nowhere else, fsync as shipped
 * (on), its log in {@code target/bench/etcd.log}. It cannot outlive its welcome: it runs under
 * {@code timeout} (killed when the lifetime given is over, even if this JVM died without cleaning up), a
 * shutdown hook stops it if this JVM is interrupted, and it writes its pid to {@code etcd.pid} in its
 * directory, which src/bench/run's exit trap reads to kill it should all else fail.
 */
final class Etcd implements AutoCloseable {

    private final Process process;
    private final long pid;
    private final Path dir;
    private final int clientPort;
    private final String version;
    private final Thread hook;
    private boolean stopped;

    private Etcd(Process process, long pid, Path dir, int clientPort, String version) {
        this.process = process;
        this.pid = pid;
        this.dir = dir;
        this.clientPort = clientPort;
        this.version = version;
        this.hook = new Thread(this::stop, "etcd-stop");
    }

    /** Starts etcd and waits (at most 30 s) until it says it is healthy. */
    static Etcd start(String binary, Path parent, Duration lifetime, Path log) throws IOException, InterruptedException {
        String version = version(binary);
        Files.createDirectories(parent);
        Files.createDirectories(log.toAbsolutePath().getParent());
        Path dir = Files.createTempDirectory(parent, "etcd-");
        int client = freePort();
        int peer = freePort();
        String clientUrl = "http://127.0.0.1:" + client;
        String peerUrl = "http://127.0.0.1:" + peer;
        List<String> command = new ArrayList<>(List.of("timeout", "--kill-after=10s", lifetime.toSeconds() + "s",
                binary, "--name=bench", "--data-dir=" + dir.resolve("data"),
                "--listen-client-urls=" + clientUrl, "--advertise-client-urls=" + clientUrl,
                "--listen-peer-urls=" + peerUrl, "--initial-advertise-peer-urls=" + peerUrl,
                "--initial-cluster=bench=" + peerUrl, "--initial-cluster-state=new",
                "--logger=zap", "--log-outputs=stderr"));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.to(log.toFile()));
        builder.environment().keySet().removeIf(name -> name.startsWith("ETCD")); // only the flags above
        Process process = builder.start();
        long pid = etcdPid(process);
        Files.writeString(dir.resolve("etcd.pid"), Long.toString(pid));
        Etcd etcd = new Etcd(process, pid, dir, client, version);
        Runtime.getRuntime().addShutdownHook(etcd.hook);
        try {
            etcd.awaitHealthy(Duration.ofSeconds(30), log);
        } catch (IOException | InterruptedException | RuntimeException e) {
            etcd.close();
            throw e;
        }
        return etcd;
    }

    int clientPort() {
        return clientPort;
    }

    long pid() {
        return pid;
    }

    /** From {@code etcd --version}: "etcd 3.4.23 (go1.19.8)". */
    String version() {
        return version;
    }

    Path dataDir() {
        return dir.resolve("data");
    }

    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs or has run
        }
        stop();
    }

    /** SIGTERM through timeout, which passes it on; SIGKILL after 15 s; then the directory goes. */
    private synchronized void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        try {
            process.destroy();
            if (!process.waitFor(15, TimeUnit.SECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
            }
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            System.err.println("could not remove " + dir + ": " + e);
        }
    }

    private void awaitHealthy(Duration within, Path log) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2)).build();
        HttpRequest health = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + clientPort + "/health"))
                .timeout(Duration.ofSeconds(2)).GET().build();
        long deadline = System.nanoTime() + within.toNanos();
        String last = "no answer";
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("etcd exited (" + process.exitValue() + "); see " + log);
            }
            try {
                HttpResponse<String> answer = http.send(health, HttpResponse.BodyHandlers.ofString());
                last = answer.statusCode() + " " + answer.body();
                if (answer.statusCode() == 200 && answer.body().contains("\"health\":\"true\"")) {
                    return;
                }
            } catch (IOException notYet) {
                last = notYet.toString();
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("etcd not healthy within " + within.toSeconds() + " s (" + last + "); see " + log);
    }

    /** The etcd that timeout started (its child), waited for up to 5 s. */
    private static long etcdPid(Process timeout) throws InterruptedException {
        for (int i = 0; i < 100; i++) {
            var child = timeout.children().findFirst();
            if (child.isPresent()) {
                return child.get().pid();
            }
            if (!timeout.isAlive()) {
                throw new IllegalStateException("timeout and etcd exited at once (" + timeout.exitValue() + ")");
            }
            Thread.sleep(50);
        }
        timeout.destroyForcibly();
        throw new IllegalStateException("no etcd under timeout after 5 s");
    }

    private static String version(String binary) throws IOException, InterruptedException {
        Process process;
        try {
            process = new ProcessBuilder(binary, "--version").redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + binary + " (etcd-hotkey needs etcd: bash src/bench/run "
                    + "installs Debian's etcd-server, or give --etcd=PATH)", e);
        }
        String out = new String(process.getInputStream().readAllBytes()).trim();
        if (!process.waitFor(10, TimeUnit.SECONDS) || process.exitValue() != 0) {
            process.destroyForcibly();
            throw new IllegalStateException(binary + " --version failed: " + out);
        }
        // "etcd Version: 3.4.23", "Git SHA: …", "Go Version: go1.19.8", "Go OS/Arch: linux/amd64"
        String etcd = out.replaceAll("(?s).*etcd Version:\\s*(\\S+).*", "$1");
        String go = out.replaceAll("(?s).*Go Version:\\s*(\\S+).*", "$1");
        return out.contains("etcd Version:") ? "etcd " + etcd + (out.contains("Go Version:") ? " (" + go + ")" : "")
                : out.replaceAll("\\s*\\n\\s*", "; ");
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
