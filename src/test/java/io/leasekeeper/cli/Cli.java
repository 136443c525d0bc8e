package io.leasekeeper.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The {@code leasekeeper} command line as a user runs it: the launcher script the build put in
 * {@code cli/target} (so the launcher and the executable jar are tested too), in a process of its own, with
 * the service's URL and a token in its environment. Its standard output and error go to files, read once it
 * has ended.
 */
final class Cli {

    static final Path LAUNCHER = Path.of("cli/target/leasekeeper").toAbsolutePath();

    private final Map<String, String> environment = new HashMap<>();
    private final Path dir;

    Cli(int port, String token, Path dir) {
        if (!Files.isExecutable(LAUNCHER)) {
            throw new IllegalStateException(LAUNCHER + " is missing: build from the top (./mvnw package, or the README's"
                    + " test command), which packages the command line before the service's tests");
        }
        this.dir = dir;
        environment.put("LEASEKEEPER_URL", "http://127.0.0.1:" + port);
        environment.put("JAVA_HOME", System.getProperty("java.home"));
        if (token != null) {
            environment.put("LEASEKEEPER_TOKEN", token);
        } else {
            environment.remove("LEASEKEEPER_TOKEN");
        }
    }

    /** Sets {@code name} in the command line's environment. */
    Cli withEnvironment(String name, String value) {
        environment.put(name, value);
        return this;
    }

    /** A command line that has ended: its status and what it wrote. */
    record Ended(int status, String out, String err) {
        /** Standard error's lines, each of which must be a diagnostic. */
        List<String> errLines() {
            return err.isEmpty() ? List.of() : List.of(err.split("\n"));
        }
    }

    /** A command line still running. */
    final class Running {
        final Process process;
        private final Path out;
        private final Path err;

        private Running(Process process, Path out, Path err) {
            this.process = process;
            this.out = out;
            this.err = err;
        }

        Ended awaitEnd(Duration atMost) throws Exception {
            if (!process.waitFor(atMost.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("leasekeeper did not end within " + atMost + "; stderr: " + read(err));
            }
            return new Ended(process.exitValue(), read(out), read(err));
        }
    }

    Running start(String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(LAUNCHER.toString());
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile());
        builder.environment().remove("LEASEKEEPER_TOKEN");
        builder.environment().putAll(environment);
        Path out = Files.createTempFile(dir, "out", ".txt");
        Path err = Files.createTempFile(dir, "err", ".txt");
        builder.redirectOutput(out.toFile()).redirectError(err.toFile()).redirectInput(ProcessBuilder.Redirect.PIPE);
        return new Running(builder.start(), out, err);
    }

    Ended run(String... args) throws Exception {
        return start(args).awaitEnd(Duration.ofSeconds(60));
    }

    private static String read(Path file) throws IOException {
        return Files.readString(file, StandardCharsets.UTF_8);
    }
}
