package io.leasekeeper.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.ServiceProcess;
import io.leasekeeper.support.TestDatabase;
import io.leasekeeper.support.TestTokens;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;

/**
 * The Dockerfile's runtime, without a Docker engine: its own extract command run on the built jar, its
 * layers copied as its COPY lines say, and its ENTRYPOINT started in that directory, made read-only and
 * (when the test runs as root) as an unprivileged user, as the image runs under the chart's
 * securityContext. The service so started must answer its health probes.
 */
class ContainerImageIT {

    private static final Path DOCKERFILE = Path.of("Dockerfile");

    @Test
    void theDockerfilesExtractAndEntrypointStartAServiceThatAnswersHealthFromAReadOnlyDirectory(@TempDir Path root)
            throws Exception {
        Dockerfile dockerfile = Dockerfile.read(DOCKERFILE);
        Dockerfile.Stage build = dockerfile.stage("build");
        Dockerfile.Stage runtime = dockerfile.last();
        assertThat(runtime.image()).as("a JRE, not a JDK, at run time").contains("jre");
        assertThat(build.image()).contains("25-jdk");

        Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path buildDir = root.resolve("build");
        Path appDir = root.resolve("application");
        Files.createDirectories(buildDir);
        Files.createDirectories(appDir);

        // RUN java -Djarmode=tools -jar <jar> extract …, on the built jar under the name the command uses.
        String extract = build.all("RUN").stream().filter(r -> r.contains("-Djarmode=tools")).findFirst().orElseThrow();
        List<String> words = Arrays.asList(extract.split("\\s+"));
        assertThat(words).contains("extract", "--layers");
        Files.copy(ServiceProcess.builtJar(), buildDir.resolve(words.get(words.indexOf("-jar") + 1)));
        List<String> extractCommand = new ArrayList<>(words);
        extractCommand.set(0, ServiceProcess.java());
        Process extraction = new ProcessBuilder(extractCommand).directory(buildDir.toFile()).inheritIO().start();
        assertThat(extraction.waitFor()).isZero();

        // COPY --from=build /build/extracted/<layer>/ ./ into the runtime stage's WORKDIR.
        String buildWorkdir = build.last("WORKDIR").orElseThrow();
        List<Dockerfile.CopyFrom> copies = Dockerfile.copiesFrom(runtime);
        assertThat(copies).extracting(Dockerfile.CopyFrom::stage).containsOnly("build");
        assertThat(copies).extracting(c -> c.source().replaceAll("/$", "").replaceAll(".*/", ""))
                .containsExactly("dependencies", "spring-boot-loader", "snapshot-dependencies", "application");
        for (Dockerfile.CopyFrom copy : copies) {
            assertThat(copy.target()).isEqualTo("./");
            Trees.copy(buildDir.resolve(Path.of(buildWorkdir).relativize(Path.of(copy.source()))), appDir);
        }

        // A non-root numeric user, and the ports the service really listens on by default.
        String user = runtime.last("USER").orElseThrow();
        assertThat(user).matches("[1-9][0-9]*(:[0-9]+)?");
        Properties defaults = ServiceDefaults.properties();
        assertThat(runtime.last("EXPOSE").orElseThrow().split("\\s+"))
                .containsExactlyInAnyOrder(defaults.getProperty("server.port"), defaults.getProperty("management.server.port"));

        // ENTRYPOINT ["java", …], run in the read-only WORKDIR.
        List<String> entrypoint = new ArrayList<>(JsonMapper.builder().build()
                .readValue(runtime.last("ENTRYPOINT").orElseThrow(), List.class));
        assertThat(entrypoint.getFirst()).isEqualTo("java");
        assertThat(entrypoint).contains("-XX:+ExitOnOutOfMemoryError").anyMatch(a -> a.startsWith("-XX:MaxRAMPercentage="));
        entrypoint.set(0, ServiceProcess.java());
        boolean asRoot = "root".equals(System.getProperty("user.name"));
        if (asRoot) {
            entrypoint.addAll(0, List.of("runuser", "-u", "nobody", "--"));
        }
        TestDatabase.Connection db = TestDatabase.connection();
        Path publicKey = root.resolve("jwt.pub");
        Files.copy(Path.of(URI.create(TestTokens.publicKeyLocation())), publicKey, StandardCopyOption.REPLACE_EXISTING);
        Files.setPosixFilePermissions(publicKey, PosixFilePermissions.fromString("rw-r--r--"));
        setPermissions(appDir, "r-xr-xr-x", "r--r--r--");
        assertThat(asRoot || !Files.isWritable(appDir)).isTrue();
        try (ServiceProcess service = ServiceProcess.ofCommand(entrypoint, appDir, Path.of("target", "image", "service.log"),
                List.of("--spring.datasource.url=" + db.url(), "--spring.datasource.username=" + db.username(),
                        "--spring.datasource.password=" + db.password(),
                        "--spring.security.oauth2.resourceserver.jwt.public-key-location=" + publicKey.toUri()))) {
            service.start();
            Api management = new Api(service.managementPort());
            for (String probe : List.of("/actuator/health", "/actuator/health/liveness", "/actuator/health/readiness")) {
                Api.Response health = management.get(probe, null);
                assertThat(health.status()).as(probe).isEqualTo(200);
                assertThat(health.body().get("status").asString()).isEqualTo("UP");
            }
            assertThat(new Api(service.port()).get("/v1/leases", null).code()).isEqualTo("UNAUTHENTICATED");
        }
        try (Stream<Path> files = Files.walk(appDir)) {
            assertThat(files.filter(Files::isRegularFile).map(p -> appDir.relativize(p).toString()))
                    .as("the WORKDIR holds the layers and nothing the service wrote")
                    .allMatch(p -> p.equals("application.jar") || p.startsWith("lib/"));
        }
        setPermissions(appDir, "rwxr-xr-x", "rw-r--r--"); // so that JUnit can delete it
    }

    private static void setPermissions(Path dir, String directories, String files) throws IOException {
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.toList()) {
                Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(Files.isDirectory(p) ? directories : files));
            }
        }
    }
}
