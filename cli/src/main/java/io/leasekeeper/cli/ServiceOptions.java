package io.leasekeeper.cli;

import io.leasekeeper.client.BaseUrl;
import io.leasekeeper.client.LeasekeeperClient;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * Where the service is and the bearer token to send: flags first, then the environment. The URL follows the
 * library's rules ({@link BaseUrl}): requests go under its path, and plain http to a host that is not loopback is
 * refused (exit 64) unless {@code --allow-plain-http} or {@code LEASEKEEPER_ALLOW_PLAIN_HTTP=true} allows it. A
 * {@code --token-file} that its group or others may read gets one warning on standard error.
 */
final class ServiceOptions {

    @CommandLine.Spec(CommandLine.Spec.Target.MIXEE)
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--url", paramLabel = "URL",
            description = "the service, https unless its host is loopback; requests go under its path"
                    + " (default: $LEASEKEEPER_URL, else http://localhost:8080)")
    String url;

    @Option(names = "--allow-plain-http",
            description = "allow an http URL whose host is not loopback: the token crosses the network in clear"
                    + " (default: $LEASEKEEPER_ALLOW_PLAIN_HTTP=true, else refused)")
    boolean allowPlainHttp;

    @Option(names = "--token-file", paramLabel = "FILE",
            description = "a file holding the bearer token, readable by its owner only (default: $LEASEKEEPER_TOKEN)")
    Path tokenFile;

    LeasekeeperClient client() {
        String base = url != null ? url : System.getenv().getOrDefault("LEASEKEEPER_URL", "http://localhost:8080");
        boolean plainHttp = allowPlainHttp || "true".equalsIgnoreCase(System.getenv("LEASEKEEPER_ALLOW_PLAIN_HTTP"));
        URI uri;
        try {
            uri = new URI(base);
        } catch (URISyntaxException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "'" + base + "' is not a URL: " + e.getMessage());
        }
        try {
            BaseUrl.checked(uri, plainHttp, "--allow-plain-http (or LEASEKEEPER_ALLOW_PLAIN_HTTP=true)");
        } catch (IllegalArgumentException broken) {
            throw new CommandLine.ParameterException(spec.commandLine(), "the service URL " + base + " "
                    + broken.getMessage());
        }
        return LeasekeeperClient.builder(uri).allowPlainHttp(plainHttp).token(token())
                .requestTimeout(Duration.ofSeconds(10)).build();
    }

    private String token() {
        if (tokenFile == null) {
            String fromEnvironment = System.getenv("LEASEKEEPER_TOKEN");
            return fromEnvironment == null || fromEnvironment.isBlank() ? null : fromEnvironment.trim();
        }
        TokenFile.exposure(tokenFile).ifPresent(Leasekeeper::diagnose);
        try {
            return Files.readString(tokenFile, StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "cannot read --token-file " + tokenFile + ": " + e);
        }
    }
}
