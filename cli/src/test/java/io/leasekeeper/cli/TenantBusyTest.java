package io.leasekeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * 429 TENANT_BUSY (revision 1.2) through the command line, run in-process ({@link Leasekeeper#execute}) against
 * a scripted service on loopback: the library's retries carry a call through it, and one that outlasts them exits
 * 70, as RATE_LIMITED and QUOTA_EXCEEDED do (cli.md lists no 429: "anything else").
 */
class TenantBusyTest {

    private static final String LEASE = AotTraining.LEASE;

    private final List<String> idempotencyKeys = new CopyOnWriteArrayList<>();
    private final StandardStreams streams = new StandardStreams();
    private ScriptedService server;

    @AfterEach
    void restore() {
        streams.close();
        if (server != null) {
            server.close();
        }
    }

    @Test
    void anAcquireAnsweredTenantBusyTwiceIsRetriedAndPrintsTheLease() throws IOException {
        serveTenantBusy(2);

        int status = Leasekeeper.execute("acquire", "--url", url(), "--target", "opaque:k", "--actor", "a",
                "--holder", "h");

        assertThat(status).isZero();
        assertThat(streams.out())
                .contains("\"leaseId\":\"3f0c6f8e-0000-4000-8000-000000000001\"").contains("\"fencingToken\":7");
        assertThat(idempotencyKeys).hasSize(3);
        assertThat(idempotencyKeys.stream().distinct()).hasSize(1);
    }

    @Test
    void anAcquireAnsweredTenantBusyBeyondTheRetriesExits70WithTheProblemOnStandardError() throws IOException {
        serveTenantBusy(Integer.MAX_VALUE);

        int status = Leasekeeper.execute("acquire", "--url", url(), "--target", "opaque:k", "--actor", "a",
                "--holder", "h");

        assertThat(status).isEqualTo(70);
        assertThat(streams.out()).isEmpty();
        assertThat(streams.err()).startsWith("leasekeeper: 429 TENANT_BUSY");
        assertThat(idempotencyKeys).hasSize(4); // the library's default attempts, under one key
        assertThat(idempotencyKeys.stream().distinct()).hasSize(1);
    }

    @Test
    void runAnsweredTenantBusyBeyondTheRetriesExits70NotTheBusyKeys75AndRunsNothing(@TempDir Path dir)
            throws IOException {
        // 75 tells a cron job that another host has the key; here no one has it, and the job did not run.
        serveTenantBusy(Integer.MAX_VALUE);
        Path ran = dir.resolve("ran");

        int status = Leasekeeper.execute("run", "--url", url(), "--target", "opaque:k", "--actor", "a",
                "--holder", "h", "--", "touch", ran.toString());

        assertThat(status).isEqualTo(70);
        assertThat(ran).doesNotExist();
        assertThat(streams.err()).startsWith("leasekeeper: 429 TENANT_BUSY");
    }

    /** Answers the first {@code times} acquires 429 TENANT_BUSY (Retry-After 0, to keep the test short), then 201. */
    private void serveTenantBusy(int times) throws IOException {
        server = new ScriptedService(exchange -> {
            exchange.getRequestBody().readAllBytes();
            idempotencyKeys.add(exchange.getRequestHeaders().getFirst("Idempotency-Key"));
            if (idempotencyKeys.size() <= times) {
                exchange.getResponseHeaders().add("Retry-After", "0");
                ScriptedService.answer(exchange, 429, "application/problem+json",
                        "{\"status\": 429, \"code\": \"TENANT_BUSY\", \"title\": \"Tenant busy\"}");
            } else {
                ScriptedService.answer(exchange, 201, "application/json", LEASE);
            }
        });
    }

    private String url() {
        return server.url();
    }
}
