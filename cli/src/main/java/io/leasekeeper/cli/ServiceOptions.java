package io.leasekeeper.cli;

import io.leasekeeper.client.LeasekeeperClient;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** Where the service is and the bearer token to send: flags first, then the environment. */
final class ServiceOptions {

    @CommandLine.Spec(CommandLine.Spec.Target.MIXEE)
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--url", paramLabel = "URL",
            description = "the service (default: $LEASEKEEPER_URL, else http://localhost:8080)")
    String url;

    @Option(names = "--token-file", paramLabel = "FILE",
            description = "a file holding the bearer token (default: $LEASEKEEPER_TOKEN)")
    Path tokenFile;

    LeasekeeperClient client() {
        String base = url != null ? url : System.getenv().getOrDefault("LEASEKEEPER_URL", "http://localhost:8080");
        URI uri;
        try {
            uri = URI.create(base.endsWith("/") ? base : base + "/");
            if (uri.getScheme() == null || uri.getHost() == null) {
                throw new IllegalArgumentException("no scheme or host");
            }
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "'" + base + "' is not a URL: " + e.getMessage());
        }
        return LeasekeeperClient.builder(uri).token(token()).requestTimeout(Duration.ofSeconds(10)).build();
    }

    private String token() {
        if (tokenFile == null) {
            String fromEnvironment = System.getenv("LEASEKEEPER_TOKEN");
            return fromEnvironment == null || fromEnvironment.isBlank() ? null : fromEnvironment.trim();
        }
        try {
            return Files.readString(tokenFile, StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "cannot read --token-file " + tokenFile + ": " + e);
        }
    }
}
