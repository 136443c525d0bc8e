package io.leasekeeper.lease;

import io.leasekeeper.client.AcquireRequest;
import io.leasekeeper.client.EventPage;
import io.leasekeeper.client.Holder;
import io.leasekeeper.client.Lease;
import io.leasekeeper.client.LeaseEvent;
import io.leasekeeper.client.LeaseKey;
import io.leasekeeper.client.LeasePage;
import io.leasekeeper.client.ListQuery;
import io.leasekeeper.client.Problem;
import io.leasekeeper.client.Target;
import io.leasekeeper.support.Api;
import java.lang.reflect.RecordComponent;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.function.Function;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The contract's operations over raw HTTP ({@link Api}): it writes the JSON bodies and query strings itself and
 * reads the answers into the same records the library answers. It holds every answer to the wire rules the
 * typed records cannot show: the success status of each operation (201 for an acquire, 200 otherwise), every
 * field of a lease, an event and a page present (null when empty), and every problem sent as
 * {@code application/problem+json} with its status in the body too.
 */
final class HttpLeaseApi implements LeaseApi {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final List<String> LEASE_FIELDS = List.of("leaseId", "key", "tenant", "program", "target", "actor",
            "operation", "owner", "holder", "fencingToken", "state", "acquiredAt", "renewedAt", "expiresAt",
            "maxExpiresAt", "endedAt", "endReason", "ttlSeconds", "maxLifetimeSeconds", "lockDelaySeconds",
            "remainingMs", "serverTime", "jobId", "traceId", "metadata");
    private static final List<String> EVENT_FIELDS = List.of("eventId", "leaseId", "type", "fromState", "toState",
            "fencingToken", "at", "principal", "requestId", "traceId", "details");

    private final Api api;
    private final String token;

    HttpLeaseApi(Api api, String token) {
        this.api = api;
        this.token = token;
    }

    @Override
    public Outcome<Lease> acquire(AcquireRequest request) {
        Map<String, Object> body = new LinkedHashMap<>();
        putIfPresent(body, "program", request.key().program());
        body.put("target", Map.of("type", request.key().target().type(), "value", request.key().target().value()));
        body.put("actor", request.key().actor());
        putIfPresent(body, "operation", request.key().operation());
        body.put("holder", request.holder());
        body.put("ttlSeconds", request.ttlSeconds());
        putIfPresent(body, "maxLifetimeSeconds", request.maxLifetimeSeconds());
        if (request.lockDelaySeconds() != 0) {
            body.put("lockDelaySeconds", request.lockDelaySeconds());
        }
        if (request.waitSeconds() != 0) {
            body.put("waitSeconds", request.waitSeconds());
        }
        putIfPresent(body, "jobId", request.jobId());
        putIfPresent(body, "traceId", request.traceId());
        if (!request.metadata().isEmpty()) {
            body.put("metadata", request.metadata());
        }
        return outcome(api.post("/v1/leases", token, body), 201, HttpLeaseApi::lease);
    }

    @Override
    public Outcome<Lease> renew(UUID leaseId, long fencingToken, Integer ttlSeconds) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("fencingToken", fencingToken);
        putIfPresent(body, "ttlSeconds", ttlSeconds);
        return outcome(api.post("/v1/leases/" + leaseId + "/renew", token, body), 200, HttpLeaseApi::lease);
    }

    @Override
    public Outcome<Lease> release(UUID leaseId, long fencingToken) {
        return outcome(api.post("/v1/leases/" + leaseId + "/release", token, Map.of("fencingToken", fencingToken)), 200,
                HttpLeaseApi::lease);
    }

    @Override
    public Outcome<Lease> revoke(UUID leaseId, String reason) {
        return outcome(api.post("/v1/admin/leases/" + leaseId + "/revoke", token, Map.of("reason", reason)), 200,
                HttpLeaseApi::lease);
    }

    @Override
    public Outcome<Lease> inspect(UUID leaseId) {
        return outcome(api.get("/v1/leases/" + leaseId, token), 200, HttpLeaseApi::lease);
    }

    @Override
    public Outcome<Lease> watch(UUID leaseId, int waitSeconds) {
        return outcome(api.get("/v1/leases/" + leaseId + "?waitSeconds=" + waitSeconds, token), 200,
                HttpLeaseApi::lease);
    }

    @Override
    public Outcome<Lease> current(LeaseKey key) {
        Map<String, String> query = new LinkedHashMap<>();
        putIfPresent(query, "program", key.program());
        query.put("targetType", key.target().type());
        query.put("target", key.target().value());
        query.put("actor", key.actor());
        putIfPresent(query, "operation", key.operation());
        return outcome(api.get("/v1/leases/current" + queryString(query), token), 200, HttpLeaseApi::lease);
    }

    @Override
    public Outcome<LeasePage> list(ListQuery q) {
        // Each filter is the query parameter of its name in the contract (program, actor, …, limit, cursor).
        Map<String, String> query = new LinkedHashMap<>();
        for (RecordComponent filter : ListQuery.class.getRecordComponents()) {
            try {
                putIfPresent(query, filter.getName(), Objects.toString(filter.getAccessor().invoke(q), null));
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
        return outcome(api.get("/v1/leases" + queryString(query), token), 200, page -> {
            List<Lease> items = new ArrayList<>();
            page.get("items").forEach(item -> items.add(lease(item)));
            return new LeasePage(List.copyOf(items), text(required(page, "nextCursor"), "nextCursor"));
        });
    }

    @Override
    public Outcome<List<LeaseEvent>> history(UUID leaseId) {
        List<LeaseEvent> events = new ArrayList<>();
        String cursor = null;
        do {
            Outcome<EventPage> page = historyPage(leaseId, null, cursor);
            if (page instanceof Outcome.Refused<EventPage> refused) {
                return new Outcome.Refused<>(refused.problem());
            }
            events.addAll(page.value().items());
            cursor = page.value().nextCursor();
        } while (cursor != null);
        return new Outcome.Answered<>(List.copyOf(events));
    }

    @Override
    public Outcome<EventPage> historyPage(UUID leaseId, Integer limit, String cursor) {
        Map<String, String> query = new LinkedHashMap<>();
        putIfPresent(query, "limit", limit == null ? null : limit.toString());
        putIfPresent(query, "cursor", cursor);
        return outcome(api.get("/v1/leases/" + leaseId + "/events" + queryString(query), token), 200, page -> {
            List<LeaseEvent> items = new ArrayList<>();
            page.get("items").forEach(item -> items.add(event(item)));
            return new EventPage(List.copyOf(items), text(required(page, "nextCursor"), "nextCursor"));
        });
    }

    private static <T> Outcome<T> outcome(Api.Response response, int success, Function<JsonNode, T> read) {
        if (response.status() == success) {
            return new Outcome.Answered<>(read.apply(response.body()));
        }
        if (response.status() < 400) {
            throw new AssertionError("answered " + response.status() + " where the contract says " + success + ": "
                    + response.raw());
        }
        if (!String.valueOf(response.header("Content-Type")).startsWith("application/problem+json")) {
            throw new AssertionError("a " + response.status() + " not sent as application/problem+json but as "
                    + response.header("Content-Type") + ": " + response.raw());
        }
        JsonNode body = response.body();
        if (body.path("status").asInt() != response.status()) {
            throw new AssertionError("a problem whose status field is not its HTTP status " + response.status() + ": "
                    + response.raw());
        }
        JsonNode held = body.get("holder");
        Holder holder = held == null || held.isNull() ? null : new Holder(text(held, "owner"), text(held, "holder"),
                instant(held, "expiresAt"), held.get("remainingMs").asLong());
        List<Problem.FieldError> errors = new ArrayList<>();
        body.path("errors").forEach(e -> errors.add(new Problem.FieldError(text(e, "field"), text(e, "message"))));
        Duration retryAfter = response.header("Retry-After") == null ? null
                : Duration.ofSeconds(Long.parseLong(response.header("Retry-After")));
        return new Outcome.Refused<>(new Problem(response.status(), text(body, "code"), text(body, "title"),
                text(body, "detail"), text(body, "traceId"), retryAfter, holder, instant(body, "availableAt"),
                List.copyOf(errors), response.raw()));
    }

    @SuppressWarnings("unchecked")
    private static Lease lease(JsonNode n) {
        LEASE_FIELDS.forEach(field -> required(n, field));
        JsonNode target = n.get("target");
        return new Lease(UUID.fromString(n.get("leaseId").asString()), text(n, "key"), text(n, "tenant"),
                text(n, "program"), new Target(target.get("type").asString(), target.get("value").asString()),
                text(n, "actor"), text(n, "operation"), text(n, "owner"), text(n, "holder"),
                n.get("fencingToken").asLong(), text(n, "state"), instant(n, "acquiredAt"), instant(n, "renewedAt"),
                instant(n, "expiresAt"), instant(n, "maxExpiresAt"), instant(n, "endedAt"), text(n, "endReason"),
                n.get("ttlSeconds").asInt(), n.get("maxLifetimeSeconds").asInt(), n.get("lockDelaySeconds").asInt(),
                n.get("remainingMs").asLong(), instant(n, "serverTime"), text(n, "jobId"), text(n, "traceId"),
                JSON.convertValue(n.get("metadata"), Map.class));
    }

    @SuppressWarnings("unchecked")
    private static LeaseEvent event(JsonNode n) {
        EVENT_FIELDS.forEach(field -> required(n, field));
        return new LeaseEvent(n.get("eventId").asLong(), UUID.fromString(n.get("leaseId").asString()),
                text(n, "type"), text(n, "fromState"), text(n, "toState"), n.get("fencingToken").asLong(),
                instant(n, "at"), text(n, "principal"), text(n, "requestId"), text(n, "traceId"),
                JSON.convertValue(n.get("details"), Map.class));
    }

    /** The contract shows every field, null when empty: one missing is a broken answer. */
    private static JsonNode required(JsonNode node, String field) {
        if (!node.has(field)) {
            throw new AssertionError("no field " + field + " in " + node);
        }
        return node;
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() ? null : value.asString();
    }

    private static Instant instant(JsonNode node, String field) {
        String value = text(node, field);
        return value == null ? null : Instant.parse(value);
    }

    private static <V> void putIfPresent(Map<String, V> map, String name, V value) {
        if (value != null) {
            map.put(name, value);
        }
    }

    private static String queryString(Map<String, String> query) {
        StringBuilder s = new StringBuilder();
        query.forEach((name, value) -> s.append(s.isEmpty() ? '?' : '&').append(name).append('=').append(encode(value)));
        return s.toString();
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
