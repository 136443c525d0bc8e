package io.leasekeeper.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * The training run behind the launcher's AOT cache (JDK 25, JEP 483/514/515): {@code java
 * -XX:AOTCacheOutput=FILE -cp leasekeeper-cli.jar io.leasekeeper.cli.AotTraining} does what a user's calls do,
 * so that the cache holds the classes (picocli, the library, Jackson, the JDK's HTTP client) and the method
 * profiles they need: help, a wrong option, a lease printed, a busy key, against a service it serves itself on
 * loopback. It writes nothing and reaches nothing outside this process.
 */
public final class AotTraining {

    /** A lease as the service writes it; the command line's in-process tests answer it too. */
    static final String LEASE = """
            {"leaseId": "3f0c6f8e-0000-4000-8000-000000000001", "key": "t/default/opaque:k/a", "tenant": "t",
             "program": "default", "target": {"type": "opaque", "value": "k"}, "actor": "a", "operation": null,
             "owner": "o", "holder": "h", "fencingToken": 7, "state": "active",
             "acquiredAt": "2026-12-05T00:00:00.000Z", "renewedAt": null, "expiresAt": "2026-12-05T00:00:30.000Z",
             "maxExpiresAt": "2026-12-06T00:00:00.000Z", "endedAt": null, "endReason": null, "ttlSeconds": 30,
             "maxLifetimeSeconds": 86400, "lockDelaySeconds": 0, "remainingMs": 30000,
             "serverTime": "2026-12-05T00:00:00.000Z", "jobId": null, "traceId": null, "metadata": {}}""";
    private static final String LEASE_HELD = """
            {"status": 409, "code": "LEASE_HELD", "title": "Lease held", "detail": "The key is held.",
             "holder": {"owner": "o", "holder": "h", "expiresAt": "2026-12-05T00:00:30.000Z", "remainingMs": 30000}}""";

    private AotTraining() {
    }

    public static void main(String[] args) throws IOException {
        HttpServer service = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        service.createContext("/", AotTraining::answer);
        service.start();
        PrintStream stdout = System.out;
        PrintStream stderr = System.err;
        PrintStream nowhere = new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8);
        System.setOut(nowhere);
        System.setErr(nowhere);
        try {
            String url = "http://127.0.0.1:" + service.getAddress().getPort();
            Leasekeeper.execute("--help");
            Leasekeeper.execute("run", "--help");
            Leasekeeper.execute("acquire", "--target", "opaque:k", "--no-such-option");
            Leasekeeper.execute("inspect", "--url", url, "--lease-id", "3f0c6f8e-0000-4000-8000-000000000001");
            Leasekeeper.execute("acquire", "--url", url, "--target", "opaque:k", "--actor", "a", "--ttl", "30s");
            Leasekeeper.execute("acquire", "--url", url, "--target", "opaque:busy", "--actor", "a");
            Leasekeeper.execute("list", "--url", url, "--actor", "a", "--operation", "sync");
        } finally {
            System.setOut(stdout);
            System.setErr(stderr);
            service.stop(0);
        }
    }

    private static void answer(HttpExchange exchange) throws IOException {
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        boolean busy = body.contains("busy");
        boolean list = exchange.getRequestURI().getPath().endsWith("/v1/leases")
                && exchange.getRequestMethod().equals("GET");
        byte[] answer = (busy ? LEASE_HELD : list ? "{\"items\": [" + LEASE + "], \"nextCursor\": null}" : LEASE)
                .getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", busy ? "application/problem+json" : "application/json");
        exchange.sendResponseHeaders(busy ? 409 : exchange.getRequestMethod().equals("POST") ? 201 : 200,
                answer.length);
        exchange.getResponseBody().write(answer);
        exchange.close();
    }
}
