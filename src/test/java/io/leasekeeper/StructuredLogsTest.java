package io.leasekeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.ServiceProcess;
import io.leasekeeper.support.TestDatabase;
import io.leasekeeper.support.TestTokens;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The service as its own process, as an operator runs it with JSON logs
 * ({@code logging.structured.format.console=ecs}) and its request, security and SQL logging turned up:
 * every line it prints is one JSON object; the lines of a request carry the trace id of the caller's
 * W3C {@code traceparent}, which is also the trace id of its lease, its audit event and its problems;
 * and no bearer token and no metadata value is ever printed, even though Spring logs every request body
 * it reads and every answer it writes at these levels.
 */
class StructuredLogsTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Test
    void jsonLogLinesCarryTheCallersTraceIdAndNeverATokenOrAMetadataValue() throws Exception {
        Path log = Path.of("target", "structured-logs", "service.log");
        Files.deleteIfExists(log);
        Files.deleteIfExists(log.resolveSibling("service.stderr.log"));
        TestDatabase.Connection db = TestDatabase.connection();
        String tenant = "logs-" + UUID.randomUUID().toString().substring(0, 8);
        String alice = TestTokens.token("alice", tenant, TestTokens.WRITE);
        String bob = TestTokens.token("bob", tenant, TestTokens.WRITE);
        String forged = TestTokens.signedByUnknownKey("mallory", tenant, TestTokens.WRITE);
        String secret = "s3cret-" + UUID.randomUUID();
        String traceId = randomHex(16);
        String heldTraceId = randomHex(16);
        String leaseId;

        try (ServiceProcess service = ServiceProcess.ofTestClasspath(log, List.of(
                "--spring.datasource.url=" + db.url(),
                "--spring.datasource.username=" + db.username(),
                "--spring.datasource.password=" + db.password(),
                "--spring.security.oauth2.resourceserver.jwt.public-key-location=" + TestTokens.publicKeyLocation(),
                "--logging.structured.format.console=ecs",
                "--logging.level.io.leasekeeper=TRACE",
                "--logging.level.org.springframework.web=TRACE",
                "--logging.level.org.springframework.security=TRACE",
                "--logging.level.org.springframework.jdbc=DEBUG",
                "--logging.level.com.zaxxer.hikari=DEBUG"))) {
            service.start();
            Api api = new Api(service.port());

            Map<String, Object> body = Map.of("target", Map.of("type", "opaque", "value", "logged"),
                    "actor", "job", "holder", "pod-1", "ttlSeconds", 30,
                    "metadata", Map.of("apiKey", secret, "nested", Map.of("password", secret)));
            Api.Response acquired = api.send(post(service, "/v1/leases", body)
                    .header("traceparent", "00-" + traceId + "-" + randomHex(8) + "-01"), alice);
            assertThat(acquired.status()).isEqualTo(201);
            assertThat(acquired.header("X-Trace-Id")).isEqualTo(traceId);
            // The client sent no traceId of its own: the lease names the trace it was taken in.
            assertThat(acquired.body().get("traceId").asString()).isEqualTo(traceId);
            assertThat(acquired.body().get("metadata").get("apiKey").asString()).isEqualTo(secret);
            leaseId = acquired.body().get("leaseId").asString();
            long fencingToken = acquired.body().get("fencingToken").asLong();

            JsonNode acquiredEvent = api.get("/v1/leases/" + leaseId + "/events", alice).body().get("items").get(0);
            assertThat(acquiredEvent.get("type").asString()).isEqualTo("ACQUIRED");
            assertThat(acquiredEvent.get("traceId").asString()).isEqualTo(traceId);
            assertThat(api.get("/v1/leases/" + leaseId, alice).body().get("metadata").get("apiKey").asString())
                    .isEqualTo(secret);

            Api.Response held = api.send(post(service, "/v1/leases", body)
                    .header("traceparent", "00-" + heldTraceId + "-" + randomHex(8) + "-01"), bob);
            assertThat(held.code()).isEqualTo("LEASE_HELD");
            assertThat(held.body().get("traceId").asString()).isEqualTo(heldTraceId);

            Api.Response refused = api.post("/v1/leases", forged, body);
            assertThat(refused.code()).isEqualTo("UNAUTHENTICATED");
            assertThat(refused.body().get("traceId").asString()).isEqualTo(refused.header("X-Trace-Id")).hasSize(32);

            assertThat(api.post("/v1/leases/" + leaseId + "/release", alice, Map.of("fencingToken", fencingToken))
                    .status()).isEqualTo(200);
        }

        List<JsonNode> lines = new ArrayList<>();
        for (String line : Files.readAllLines(log)) {
            JsonNode entry = JSON.readTree(line);
            assertThat(entry.isObject()).as(line).isTrue();
            assertThat(entry.path("@timestamp").asString("")).as(line).isNotEmpty();
            assertThat(entry.path("log").path("level").asString("")).as(line).isNotEmpty();
            lines.add(entry);
        }
        assertThat(lines).hasSizeGreaterThan(50);

        List<JsonNode> ofTheTrace = lines.stream().filter(l -> traceId.equals(l.path("traceId").asString(null))).toList();
        assertThat(ofTheTrace).as("lines logged while serving the acquire").isNotEmpty()
                .allSatisfy(l -> assertThat(l.path("spanId").asString("")).hasSize(16));
        assertThat(lines).anySatisfy(l -> assertThat(l.path("traceId").asString("")).isEqualTo(heldTraceId));

        // Spring did log the bodies it read and wrote (so the secret had every chance to appear) ...
        assertThat(lines).anySatisfy(l -> assertThat(l.get("message").asString()).contains("Metadata[2 keys, not shown]"));
        // ... and neither the metadata nor any token (whole, or its signature) is anywhere in the output.
        String output = Files.readString(log) + Files.readString(log.resolveSibling("service.stderr.log"));
        assertThat(output).doesNotContain(secret);
        for (String token : List.of(alice, bob, forged)) {
            assertThat(output).doesNotContain(token).doesNotContain(token.substring(token.lastIndexOf('.') + 1));
        }
    }

    private static HttpRequest.Builder post(ServiceProcess service, String path, Object body) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.port() + path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
    }

    private static String randomHex(int bytes) {
        byte[] random = new byte[bytes];
        ThreadLocalRandom.current().nextBytes(random);
        random[0] |= 1;
        return HexFormat.of().formatHex(random);
    }
}
