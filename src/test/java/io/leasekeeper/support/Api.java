package io.leasekeeper.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A client of the wire contract only: raw HTTP with JSON, as an outside client would call the service.
 * It knows nothing of the service's classes.
 */
public final class Api {

    public record Response(int status, java.net.http.HttpHeaders headers, JsonNode body, String raw) {
        public String code() {
            return body.path("code").asString(null);
        }

        public String header(String name) {
            return headers.firstValue(name).orElse(null);
        }
    }

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private final String base;

    public Api(int port) {
        this.base = "http://127.0.0.1:" + port;
    }

    public Response get(String path, String token) {
        return send(HttpRequest.newBuilder(URI.create(base + path)).GET(), token);
    }

    public Response post(String path, String token, Object body) {
        String json = body instanceof String s ? s : JSON.writeValueAsString(body);
        return send(HttpRequest.newBuilder(URI.create(base + path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)), token);
    }

    public Response send(HttpRequest.Builder request, String token) {
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        try {
            HttpResponse<String> response = HTTP.send(request.timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofString());
            String raw = response.body();
            JsonNode body = raw == null || raw.isBlank() || !isJson(response) ? JSON.createObjectNode() : JSON.readTree(raw);
            return new Response(response.statusCode(), response.headers(), body, raw);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static boolean isJson(HttpResponse<String> response) {
        return response.headers().firstValue("Content-Type").map(t -> t.contains("json")).orElse(true);
    }

    /** A minimal valid acquire body on an opaque target. */
    public static Map<String, Object> acquireBody(String target, String actor, String holder, int ttlSeconds) {
        return Map.of("target", Map.of("type", "opaque", "value", target), "actor", actor, "holder", holder,
                "ttlSeconds", ttlSeconds);
    }
}
