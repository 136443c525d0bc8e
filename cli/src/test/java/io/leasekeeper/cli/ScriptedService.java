package io.leasekeeper.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/** A service on loopback whose every answer the test writes: the command line's peer in its in-process tests. */
final class ScriptedService implements AutoCloseable {

    private final HttpServer server;

    ScriptedService(HttpHandler handler) throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", handler);
        server.start();
    }

    /** The same answer to every request. */
    static ScriptedService answering(int status, String type, String body) throws IOException {
        return new ScriptedService(exchange -> {
            exchange.getRequestBody().readAllBytes();
            answer(exchange, status, type, body);
        });
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    static void answer(HttpExchange exchange, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", type);
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
        exchange.close();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
