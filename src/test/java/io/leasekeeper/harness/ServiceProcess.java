package io.leasekeeper.harness;

import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.Api;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** One service instance as its own JVM, started from the built jar, killed with SIGKILL on demand. */
final class ServiceProcess implements AutoCloseable {

    private final Path jar;
    private final List<String> arguments;
    private final Path log;
    private final int port;
    private final int managementPort;
    private Process process;

    ServiceProcess(Path jar, int index, List<String> arguments) {
        this.jar = jar;
        this.port = freePort();
        this.managementPort = freePort();
        this.arguments = arguments;
        this.log = Path.of("target", "harness", "instance-" + index + ".log");
    }

    int port() {
        return port;
    }

    /** Actuator's port: probes. */
    int managementPort() {
        return managementPort;
    }

    void start() {
        try {
            Files.createDirectories(log.getParent());
            var command = new java.util.ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx384m", "-jar", jar.toString(),
                    "--server.port=" + port, "--management.server.port=" + managementPort));
            command.addAll(arguments);
            process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Api api = new Api(managementPort);
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(250)).ignoreExceptions()
                .until(() -> api.get("/actuator/health/readiness", null).status() == 200);
    }

    /** kill -9: no shutdown hook, no graceful drain, in-flight transactions die with the connection. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    @Override
    public void close() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            process.waitFor();
        }
    }

    static Path builtJar() {
        File[] jars = new File("target").listFiles((dir, name) -> name.startsWith("leasekeeper-") && name.endsWith(".jar")
                && !name.endsWith("-plain.jar"));
        if (jars == null || jars.length == 0) {
            throw new IllegalStateException("no built jar in target/: run the harness with ./mvnw verify -Pharness");
        }
        return jars[0].toPath().toAbsolutePath();
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
