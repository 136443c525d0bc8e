package io.leasekeeper.support;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A gateway on loopback that routes by path, as an ingress in front of several backends does: a request under
 * {@link #PREFIX} goes to the service with the prefix taken off, and any other request to "another backend",
 * which answers 404 and keeps what it was sent (whether a bearer token came with it), so that a test can show
 * that nothing meant for Leasekeeper, the token least of all, went elsewhere.
 */
public final class PathGateway implements AutoCloseable {

    public static final String PREFIX = "/leasekeeper";

    /** Hop-by-hop headers and those the JDK's client sets itself: not passed on. */
    private static final Set<String> NOT_FORWARDED = Set.of("connection", "content-length", "expect", "host",
            "upgrade", "http2-settings", "keep-alive", "transfer-encoding", "te");

    private final HttpServer server;
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private final HttpClient forward = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final int servicePort;
    private final List<String> elsewhere = new CopyOnWriteArrayList<>();

    public PathGateway(int servicePort) {
        this.servicePort = servicePort;
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.setExecutor(threads);
        server.createContext(PREFIX + "/", this::toService);
        server.createContext("/", this::toAnotherBackend);
        server.start();
    }

    /** The gateway's URL of the service: {@code http://127.0.0.1:<port>/leasekeeper} followed by {@code tail}. */
    public String url(String tail) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + PREFIX + tail;
    }

    /** What the other backend was sent: one {@code METHOD path} each, and whether it carried a bearer token. */
    public List<String> sentElsewhere() {
        return List.copyOf(elsewhere);
    }

    private void toService(HttpExchange exchange) throws IOException {
        try (exchange) {
            URI in = exchange.getRequestURI();
            String target = "http://127.0.0.1:" + servicePort + in.getRawPath().substring(PREFIX.length())
                    + (in.getRawQuery() == null ? "" : "?" + in.getRawQuery());
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(target)).method(
                    exchange.getRequestMethod(),
                    HttpRequest.BodyPublishers.ofByteArray(exchange.getRequestBody().readAllBytes()));
            exchange.getRequestHeaders().forEach((name, values) -> {
                if (!NOT_FORWARDED.contains(name.toLowerCase(Locale.ROOT))) {
                    values.forEach(value -> request.header(name, value));
                }
            });
            HttpResponse<byte[]> response;
            try {
                response = forward.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
            response.headers().map().forEach((name, values) -> {
                if (!NOT_FORWARDED.contains(name.toLowerCase(Locale.ROOT))) {
                    exchange.getResponseHeaders().put(name, values);
                }
            });
            byte[] body = response.body();
            exchange.sendResponseHeaders(response.statusCode(), body.length == 0 ? -1 : body.length);
            exchange.getResponseBody().write(body);
        }
    }

    private void toAnotherBackend(HttpExchange exchange) throws IOException {
        try (exchange) {
            exchange.getRequestBody().readAllBytes();
            boolean token = exchange.getRequestHeaders().containsKey("Authorization");
            elsewhere.add(exchange.getRequestMethod() + " " + exchange.getRequestURI()
                    + (token ? " with a bearer token" : ""));
            byte[] body = "{\"status\": 404, \"title\": \"Not Found\", \"detail\": \"another backend\"}"
                    .getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/problem+json");
            exchange.sendResponseHeaders(404, body.length);
            exchange.getResponseBody().write(body);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
        forward.close();
    }
}
