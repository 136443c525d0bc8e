package io.leasekeeper.support;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One service instance as its own JVM, started from the built jar or from the test classpath, killed
 * with SIGKILL on demand. Its standard output goes to {@code target/<dir>/<name>.log}, its standard
 * error to {@code <name>.stderr.log}.
 */
public final class ServiceProcess implements AutoCloseable {

    private final List<String> launch;
    private final Path directory;
    private final List<String> arguments;
    private final Path log;
    private final Path stderr;
    private final int port;
    private final int managementPort;
    private Process process;

    private ServiceProcess(List<String> launch, Path directory, Path log, List<String> arguments) {
        this.launch = launch;
        this.directory = directory;
        this.port = freePort();
        this.managementPort = freePort();
        this.arguments = arguments;
        this.log = log;
        this.stderr = log.resolveSibling(log.getFileName().toString().replace(".log", ".stderr.log"));
    }

    /** The packaged service: {@code java -jar} on the built jar, as it is deployed. */
    public static ServiceProcess ofJar(Path jar, Path log, List<String> arguments) {
        return ofJar(jar, "384m", log, arguments);
    }

    /** The packaged service with this largest heap ({@code -Xmx}, say {@code 96m}). */
    public static ServiceProcess ofJar(Path jar, String maxHeap, Path log, List<String> arguments) {
        return new ServiceProcess(List.of(java(), "-Xmx" + maxHeap, "-jar", jar.toString()), null, log, arguments);
    }

    /** Any launch command, run in that directory; the ports and the arguments are appended to it. */
    public static ServiceProcess ofCommand(List<String> launch, Path directory, Path log, List<String> arguments) {
        return new ServiceProcess(launch, directory, log, arguments);
    }

    /** The service's main class on this JVM's classpath: no packaging needed, so plain {@code ./mvnw test} runs it. */
    public static ServiceProcess ofTestClasspath(Path log, List<String> arguments) {
        return new ServiceProcess(List.of(java(), "-Xmx384m", "-cp", System.getProperty("java.class.path"),
                "io.leasekeeper.LeasekeeperApplication"), null, log, arguments);
    }

    public int port() {
        return port;
    }

    /** Actuator's port: probes. */
    public int managementPort() {
        return managementPort;
    }

    public Path log() {
        return log;
    }

    public long pid() {
        return process.pid();
    }

    /** Whether the process still runs (it may have exited by itself, on an OutOfMemoryError say). */
    public boolean isAlive() {
        return process != null && process.isAlive();
    }

    /** What the service wrote on standard error. */
    public Path stderr() {
        return stderr;
    }

    /** Starts the instance and waits until it is ready. */
    public void start() {
        try {
            Files.createDirectories(log.getParent());
            List<String> command = new ArrayList<>(launch);
            command.add("--server.port=" + port);
            command.add("--management.server.port=" + managementPort);
            command.addAll(arguments);
            process = new ProcessBuilder(command).directory(directory == null ? null : directory.toFile())
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .redirectError(ProcessBuilder.Redirect.appendTo(stderr.toFile())).start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Api api = new Api(managementPort);
        // Connection refused until it listens; an exited process fails at once.
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(250))
                .ignoreException(UncheckedIOException.class).until(() -> {
                    if (!process.isAlive()) {
                        throw new IllegalStateException("the service exited; see " + log + " and " + stderr);
                    }
                    return api.get("/actuator/health/readiness", null).status() == 200;
                });
    }

    /** kill -9: no shutdown hook, no graceful drain, in-flight transactions die with the connection. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    /** SIGTERM, and waits for the graceful shutdown to finish. */
    @Override
    public void close() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            process.waitFor();
        }
    }

    public static Path builtJar() {
        File[] jars = new File("target").listFiles((dir, name) -> name.startsWith("leasekeeper-") && name.endsWith(".jar")
                && !name.endsWith("-plain.jar"));
        if (jars == null || jars.length == 0) {
            throw new IllegalStateException("no built jar in target/: run the harness with ./mvnw verify -Pharness");
        }
        return jars[0].toPath().toAbsolutePath();
    }

    /** The java launcher of the JDK running the tests. */
    public static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
