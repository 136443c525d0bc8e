package io.leasekeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.leasekeeper.client.BaseUrl;
import io.leasekeeper.support.PathGateway;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * Where the command line sends its token (cli.md, "Packaging and configuration"): under the path of {@code --url}
 * behind a gateway that routes by path, never to another backend; plain http to a host that is not loopback
 * refused (exit 64) unless {@code --allow-plain-http} or {@code LEASEKEEPER_ALLOW_PLAIN_HTTP=true} allows it; and a
 * {@code --token-file} that others may read warned of, once.
 */
class CommandLineServiceOptionsTest extends CommandLineTest {

    @Test
    void everyCallGoesUnderTheUrlsPathWithOrWithoutItsTrailingSlash() throws Exception {
        try (PathGateway gateway = new PathGateway(port)) {
            Cli alice = cli(writer("alice"));
            Cli.Ended acquired = alice.run("acquire", "--url", gateway.url(""), "--target", "opaque:nightly",
                    "--actor", "report");
            assertThat(acquired.status()).as(acquired.err()).isZero();
            JsonNode lease = JSON.readTree(acquired.out());
            Cli.Ended released = alice.run("release", "--url", gateway.url("/"), "--lease-id",
                    lease.get("leaseId").asString(), "--fencing-token", lease.get("fencingToken").asString());
            Cli.Ended ran = alice.run("run", "--url", gateway.url("/"), "--target", "opaque:nightly", "--actor",
                    "report", "--", "true");

            assertThat(released.status()).as(released.err()).isZero();
            assertThat(JSON.readTree(released.out()).get("state").asString()).isEqualTo("released");
            assertThat(ran.status()).as(ran.err()).isZero();
            assertThat(ran.err()).isEmpty();
            assertThat(gateway.sentElsewhere()).isEmpty();
        }
        assertThat(jdbc.sql("SELECT state FROM lease WHERE tenant = :t ORDER BY acquired_at").param("t", tenant)
                .query(String.class).list()).containsExactly("released", "released");
    }

    @Test
    void plainHttpToAHostThatIsNotLoopbackExitsSixtyFourUnlessAllowed() throws Exception {
        String host = InetAddress.getLocalHost().getHostName();
        assumeThat(BaseUrl.isLoopback(host)).as("this host's name is not written as loopback").isFalse();
        String byName = "http://" + host + ":" + port;

        Cli.Ended refused = cli(writer("alice")).run("acquire", "--url", byName, "--target", "opaque:a",
                "--actor", "report");
        Cli.Ended byFlag = cli(writer("alice")).run("acquire", "--url", byName, "--allow-plain-http",
                "--target", "opaque:b", "--actor", "report");
        Cli.Ended byEnvironment = cli(writer("alice")).withEnvironment("LEASEKEEPER_URL", byName)
                .withEnvironment("LEASEKEEPER_ALLOW_PLAIN_HTTP", "true")
                .run("acquire", "--target", "opaque:c", "--actor", "report");

        assertThat(refused.status()).isEqualTo(64);
        assertThat(refused.errLines()).singleElement().satisfies(line -> assertThat(line)
                .startsWith("leasekeeper: the service URL " + byName + " must be https unless its host is loopback")
                .contains("allow it with --allow-plain-http (or LEASEKEEPER_ALLOW_PLAIN_HTTP=true)"));
        assertThat(byFlag.status()).as(byFlag.err()).isZero();
        assertThat(byEnvironment.status()).as(byEnvironment.err()).isZero();
        assertThat(jdbc.sql("""
                SELECT k.target_value FROM lease l JOIN lease_key k ON k.tenant = l.tenant AND k.id = l.key_id
                WHERE l.tenant = :t ORDER BY k.target_value
                """)
                .param("t", tenant).query(String.class).list()).as("the refused call sent nothing")
                .containsExactly("b", "c");
    }

    @Test
    void aTokenFileOthersMayReadIsWarnedOfOnceOnStandardError() throws Exception {
        Path token = dir.resolve("token");
        Files.writeString(token, writer("alice") + "\n", StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-r--r--"));
        Cli.Ended readable = cli(null).run("run", "--token-file", token.toString(), "--target", "opaque:nightly",
                "--actor", "report", "--", "true");

        Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-------"));
        Cli.Ended ownerOnly = cli(null).run("run", "--token-file", token.toString(), "--target", "opaque:nightly",
                "--actor", "report", "--", "true");

        assertThat(readable.status()).as("a warning, not a refusal").isZero();
        assertThat(readable.errLines()).singleElement().isEqualTo("leasekeeper: warning: --token-file " + token
                + " can be read by its group and others (rw-r--r--); the token in it is your identity to the service:"
                + " chmod 600 " + token);
        assertThat(ownerOnly.status()).isZero();
        assertThat(ownerOnly.err()).isEmpty();
    }
}
