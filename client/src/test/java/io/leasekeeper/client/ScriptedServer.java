package io.leasekeeper.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;

/**
 * A scripted Leasekeeper on loopback: the test's handler answers each request (its body read first), one at a
 * time on the server's own thread.
 */
final class ScriptedServer implements AutoCloseable {

    interface Handler {
        void handle(HttpExchange exchange) throws IOException;
    }

    private final HttpServer server;

    ScriptedServer(Handler handler) throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            handler.handle(exchange);
        });
        server.start();
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    @Override
    public void close() {
        server.stop(0);
    }

    /** An active lease as the service writes it, with the TTL and {@code remainingMs} a test needs. */
    static String lease(int ttlSeconds, long remainingMs) {
        return """
                {"leaseId": "3f0c6f8e-0000-4000-8000-000000000001", "key": "t/default/opaque:k/a", "tenant": "t",
                 "program": "default", "target": {"type": "opaque", "value": "k"}, "actor": "a", "operation": null,
                 "owner": "o", "holder": "h", "fencingToken": 7, "state": "active",
                 "acquiredAt": "2026-12-05T00:00:00.000Z", "renewedAt": null,
                 "expiresAt": "2026-12-05T00:00:30.000Z", "maxExpiresAt": "2026-12-06T00:00:00.000Z",
                 "endedAt": null, "endReason": null, "ttlSeconds": %d, "maxLifetimeSeconds": 86400,
                 "lockDelaySeconds": 0, "remainingMs": %d, "serverTime": "2026-12-05T00:00:00.000Z",
                 "jobId": null, "traceId": null, "metadata": {"a": 1}}""".formatted(ttlSeconds, remainingMs);
    }

    static boolean isAcquire(HttpExchange exchange) {
        return exchange.getRequestURI().getPath().equals("/v1/leases") && exchange.getRequestMethod().equals("POST");
    }

    /** 429 TENANT_BUSY (revision 1.2) with its Retry-After. */
    static void tenantBusy(HttpExchange exchange, int retryAfterSeconds) throws IOException {
        exchange.getResponseHeaders().add("Retry-After", Integer.toString(retryAfterSeconds));
        answer(exchange, 429, "application/problem+json",
                "{\"status\": 429, \"code\": \"TENANT_BUSY\", \"title\": \"Tenant busy\"}");
    }

    static void answer(HttpExchange exchange, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", type);
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
        exchange.close();
    }
}
