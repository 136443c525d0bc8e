package io.leasekeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * The one-call commands (cli.md, "One-call commands"): each makes its call, prints the JSON answer on standard
 * output and exits 0; and every exit status of the contract other than {@code run}'s, provoked.
 */
class CommandLineCallsTest extends CommandLineTest {

    private static JsonNode json(Cli.Ended ended) {
        assertThat(ended.status()).as(ended.err()).isZero();
        assertThat(ended.err()).isEmpty();
        return JSON.readTree(ended.out());
    }

    @Test
    void everyCallPrintsItsAnswerAsJson() throws Exception {
        Cli alice = cli(writer("alice"));
        JsonNode acquired = json(alice.run("acquire", "--target", "opaque:nightly", "--actor", "report", "--holder",
                "job-1", "--ttl", "45s", "--job-id", "j-7", "--metadata", "{\"shard\":3}"));
        String id = acquired.get("leaseId").asString();
        String token = acquired.get("fencingToken").asString();
        assertThat(acquired.get("key").asString()).isEqualTo(tenant + "/default/opaque:nightly/report");
        assertThat(acquired.get("ttlSeconds").asInt()).isEqualTo(45);
        assertThat(acquired.get("jobId").asString()).isEqualTo("j-7");
        assertThat(acquired.get("metadata").get("shard").asInt()).isEqualTo(3);
        assertThat(acquired.get("expiresAt").asString()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z");

        JsonNode renewed = json(alice.run("renew", "--lease-id", id, "--fencing-token", token, "--ttl", "1m"));
        assertThat(renewed.get("ttlSeconds").asInt()).isEqualTo(60);
        assertThat(json(alice.run("inspect", "--lease-id", id)).get("state").asString()).isEqualTo("active");
        assertThat(json(alice.run("current", "--target", "opaque:nightly", "--actor", "report")).get("leaseId")
                .asString()).isEqualTo(id);
        JsonNode page = json(alice.run("list", "--actor", "report", "--target", "opaque:nightly"));
        assertThat(page.get("items")).hasSize(1);
        assertThat(page.get("nextCursor").isNull()).isTrue();
        JsonNode watched = json(alice.run("watch", "--lease-id", id, "--wait", "1s"));
        assertThat(watched.get("state").asString()).as("still active when the wait ends").isEqualTo("active");
        assertThat(json(alice.run("release", "--lease-id", id, "--fencing-token", token)).get("state").asString())
                .isEqualTo("released");
        List<String> types = new ArrayList<>();
        JsonNode firstPage = json(alice.run("history", "--lease-id", id, "--limit", "2"));
        firstPage.get("items").forEach(e -> types.add(e.get("type").asString()));
        json(alice.run("history", "--lease-id", id, "--cursor", firstPage.get("nextCursor").asString()))
                .get("items").forEach(e -> types.add(e.get("type").asString()));
        assertThat(types).containsExactly("ACQUIRED", "RENEWED", "RELEASED");

        String second = json(alice.run("acquire", "--target", "opaque:nightly", "--actor", "report"))
                .get("leaseId").asString();
        Files.writeString(dir.resolve("admin-token"), admin("root") + "\n", StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(dir.resolve("admin-token"), PosixFilePermissions.fromString("rw-------"));
        JsonNode revoked = json(cli(null).run("revoke", "--token-file", dir.resolve("admin-token").toString(),
                "--lease-id", second, "--reason", "maintenance"));
        assertThat(revoked.get("state").asString()).isEqualTo("revoked");
    }

    @Test
    void listTakesTheKeysOperationAsEveryOtherKeyCommandDoes() throws Exception {
        Cli alice = cli(writer("alice"));
        String sync = json(alice.run("acquire", "--target", "opaque:repo", "--actor", "indexer", "--operation",
                "Sync")).get("leaseId").asString();
        json(alice.run("acquire", "--target", "opaque:repo", "--actor", "indexer", "--operation", "reindex"));
        json(alice.run("acquire", "--target", "opaque:repo", "--actor", "indexer"));

        JsonNode synced = json(alice.run("list", "--actor", "indexer", "--operation", "sync"));
        JsonNode all = json(alice.run("list", "--actor", "indexer"));
        Cli.Ended badName = alice.run("list", "--operation", "not a name!");

        assertThat(synced.get("items")).singleElement().satisfies(lease ->
                assertThat(lease.get("leaseId").asString()).isEqualTo(sync));
        assertThat(all.get("items")).as("without --operation, every operation and none").hasSize(3);
        assertThat(badName.status()).isEqualTo(65);
        assertThat(badName.errLines()).singleElement().satisfies(line -> assertThat(line)
                .startsWith("leasekeeper: 400 VALIDATION_FAILED").contains("operation"));
    }

    @Test
    void theLaunchersHelpAnswersForEveryCommandEvenAfterOtherOptions() throws Exception {
        Cli alice = cli(writer("alice"));
        for (String[] asking : new String[][] {{"run", "--help"}, {"revoke", "--help"}, {"acquire", "-h"},
                {"help", "run"}, {"run", "--target", "opaque:x", "--help"}, {"list", "--operation", "x", "-h"}}) {
            Cli.Ended help = alice.run(asking);

            assertThat(help.status()).as(String.join(" ", asking)).isZero();
            assertThat(help.err()).as(String.join(" ", asking)).isEmpty();
            assertThat(help.out()).as(String.join(" ", asking)).startsWith("Usage: leasekeeper " + asking[0].replace(
                    "help", asking[1])).contains("Exit statuses:", "Example:");
        }
    }

    @Test
    void invisibleCharactersAreEscapedOnStandardErrorAndExactInStandardOutputsJsonUnderAnyLocale() throws Exception {
        acquire(writer("bob"), "nightly", "report", "pod\u200B-b", 60);
        Cli cLocale = cli(writer("alice")).withEnvironment("LC_ALL", "C").withEnvironment("LANG", "C");

        Cli.Ended busy = cLocale.run("acquire", "--target", "opaque:nightly", "--actor", "report");
        Cli.Ended current = cLocale.run("current", "--target", "opaque:nightly", "--actor", "report");

        assertThat(busy.status()).isEqualTo(75);
        assertThat(busy.errLines()).singleElement().satisfies(line -> assertThat(line)
                .contains("holder pod\\u200B-b,").doesNotContain("\u200B"));
        assertThat(json(current).get("holder").asString()).isEqualTo("pod\u200B-b");
    }

    @Test
    void anAcquireOfABusyKeyExitsSeventyFive() throws Exception {
        acquire(writer("bob"), "nightly", "report", "pod-b", 60);

        Cli.Ended ended = cli(writer("alice")).run("acquire", "--target", "opaque:nightly", "--actor", "report");

        assertThat(ended.status()).isEqualTo(75);
        assertThat(ended.out()).isEmpty();
        assertThat(ended.errLines()).singleElement().satisfies(line -> assertThat(line).startsWith("leasekeeper: ")
                .contains("409 LEASE_HELD", "owner bob"));
    }

    @Test
    void wrongUsageExitsSixtyFour() throws Exception {
        Cli alice = cli(writer("alice"));
        for (String[] usage : new String[][] {
                {"run", "--target", "opaque:x", "--actor", "a", "--no-such-option", "--", "true"},
                {"run", "--actor", "a", "--", "true"},
                {"run", "--target", "opaque:x", "--actor", "a", "--ttl", "30 seconds", "--", "true"},
                {"acquire", "--target", "no-colon", "--actor", "a"},
                {"acquire", "--target", "opaque:x", "--actor", "a", "--metadata", "[1]"},
                {"no-such-command"}}) {
            Cli.Ended ended = alice.run(usage);
            assertThat(ended.status()).as(String.join(" ", usage)).isEqualTo(64);
            assertThat(ended.errLines()).as(String.join(" ", usage)).singleElement()
                    .satisfies(line -> assertThat(line).startsWith("leasekeeper: "));
        }
        assertThat(jdbc.sql("SELECT count(*) FROM lease WHERE tenant = :t").param("t", tenant).query(Long.class)
                .single()).as("nothing acquired").isZero();
    }

    @Test
    void inputTheServiceRefusesExitsSixtyFive() throws Exception {
        Cli.Ended ended = cli(writer("alice")).run("acquire", "--target", "opaque:x", "--actor", "not a name!");

        assertThat(ended.status()).isEqualTo(65);
        assertThat(ended.errLines()).singleElement().satisfies(line -> assertThat(line)
                .startsWith("leasekeeper: 400 VALIDATION_FAILED").contains("actor"));
    }

    @Test
    void anUnreachableServiceOrOneAnswering503ExitsSixtyNine() throws Exception {
        int closed;
        try (ServerSocket socket = new ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        Cli.Ended unreachable = new Cli(closed, writer("alice"), dir).run("inspect", "--lease-id",
                "00000000-0000-0000-0000-000000000001");

        AtomicInteger calls = new AtomicInteger();
        HttpServer unavailable = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        unavailable.createContext("/", exchange -> {
            calls.incrementAndGet();
            byte[] body = "{\"code\":\"DATABASE_UNAVAILABLE\",\"status\":503,\"title\":\"Database unavailable\"}"
                    .getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/problem+json");
            exchange.getResponseHeaders().add("Retry-After", "0");
            exchange.sendResponseHeaders(503, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        unavailable.start();
        Cli.Ended answered503;
        try {
            answered503 = new Cli(unavailable.getAddress().getPort(), writer("alice"), dir).run("acquire", "--target",
                    "opaque:x", "--actor", "a");
        } finally {
            unavailable.stop(0);
        }

        assertThat(unreachable.status()).isEqualTo(69);
        assertThat(unreachable.errLines()).singleElement().satisfies(line -> assertThat(line)
                .startsWith("leasekeeper: ").contains("unreachable"));
        assertThat(answered503.status()).isEqualTo(69);
        assertThat(answered503.errLines()).singleElement().satisfies(line -> assertThat(line)
                .startsWith("leasekeeper: 503 DATABASE_UNAVAILABLE"));
        assertThat(calls.get()).as("retried before giving up").isGreaterThan(1);
    }

    @Test
    void unauthenticatedOrForbiddenExitsSeventySeven() throws Exception {
        Cli.Ended noToken = cli(null).run("acquire", "--target", "opaque:x", "--actor", "a");
        Cli.Ended readOnly = cli(reader("carol")).run("acquire", "--target", "opaque:x", "--actor", "a");
        String leaseId = acquire(writer("bob"), "x", "a", "pod-b", 60).body().get("leaseId").asString();
        Cli.Ended notAdmin = cli(writer("alice")).run("revoke", "--lease-id", leaseId, "--reason", "mine now");

        assertThat(noToken.status()).isEqualTo(77);
        assertThat(noToken.err()).startsWith("leasekeeper: 401");
        assertThat(readOnly.status()).isEqualTo(77);
        assertThat(readOnly.err()).startsWith("leasekeeper: 403");
        assertThat(notAdmin.status()).isEqualTo(77);
        assertThat(jdbc.sql("SELECT state FROM lease WHERE id = CAST(:id AS uuid)").param("id", leaseId)
                .query(String.class).single()).isEqualTo("active");
    }

    @Test
    void anythingElseExitsSeventy() throws Exception {
        var lease = acquire(writer("alice"), "x", "a", "pod-a", 60).body();
        String id = lease.get("leaseId").asString();
        long token = lease.get("fencingToken").asLong();

        Cli.Ended wrongToken = cli(writer("alice")).run("release", "--lease-id", id, "--fencing-token",
                Long.toString(token + 1));
        Cli.Ended noLease = cli(writer("alice")).run("inspect", "--lease-id", "00000000-0000-0000-0000-000000000001");

        assertThat(wrongToken.status()).isEqualTo(70);
        assertThat(wrongToken.err()).startsWith("leasekeeper: 409 FENCING_TOKEN_MISMATCH");
        assertThat(noLease.status()).isEqualTo(70);
        assertThat(noLease.err()).startsWith("leasekeeper: 404 LEASE_NOT_FOUND");
        assertThat(jdbc.sql("SELECT state FROM lease WHERE id = CAST(:id AS uuid)").param("id", id)
                .query(String.class).single()).as("the wrong token released nothing").isEqualTo("active");
    }
}
