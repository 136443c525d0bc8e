package io.leasekeeper.audit;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * The statements that make the transitions write their events themselves: each event carries the
 * transition's instant, who made it, in which trace, and details whose instants are the lease's own,
 * in the API's format.
 */
class AuditEventDetailsTest extends IntegrationTest {

    @Test
    void acquireRenewAndReleaseEventsCarryTheLeasesInstantsAndTtl() {
        String w = writer("alice");
        Api.Response acquired = acquire(w, "detailed", "job", "h", 30);
        JsonNode lease = acquired.body();
        String id = lease.get("leaseId").asString();
        long token = lease.get("fencingToken").asLong();
        Api.Response renewed = api.post("/v1/leases/" + id + "/renew", w, Map.of("fencingToken", token, "ttlSeconds", 40));
        assertThat(renewed.status()).isEqualTo(200);
        Api.Response released = release(w, id, token);
        assertThat(released.status()).isEqualTo(200);

        JsonNode events = api.get("/v1/leases/" + id + "/events", w).body().get("items");
        assertThat(events.size()).isEqualTo(3);

        JsonNode acquiredEvent = events.get(0);
        assertThat(acquiredEvent.get("at").asString()).isEqualTo(lease.get("acquiredAt").asString());
        assertThat(acquiredEvent.get("principal").asString()).isEqualTo("alice");
        assertThat(acquiredEvent.get("traceId").asString()).isEqualTo(acquired.header("X-Trace-Id"));
        assertThat(acquiredEvent.get("details")).isEqualTo(json(
                "{\"expiresAt\": \"%s\", \"ttlSeconds\": 30}".formatted(lease.get("expiresAt").asString())));

        JsonNode renewedEvent = events.get(1);
        assertThat(renewedEvent.get("at").asString()).isEqualTo(renewed.body().get("renewedAt").asString());
        assertThat(renewedEvent.get("fromState").asString()).isEqualTo("active");
        assertThat(renewedEvent.get("toState").asString()).isEqualTo("active");
        assertThat(renewedEvent.get("traceId").asString()).isEqualTo(renewed.header("X-Trace-Id"));
        assertThat(renewedEvent.get("details")).isEqualTo(json(
                "{\"previousExpiresAt\": \"%s\", \"expiresAt\": \"%s\", \"ttlSeconds\": 40}".formatted(
                        lease.get("expiresAt").asString(), renewed.body().get("expiresAt").asString())));

        JsonNode releasedEvent = events.get(2);
        assertThat(releasedEvent.get("at").asString()).isEqualTo(released.body().get("endedAt").asString());
        assertThat(releasedEvent.get("details")).isEqualTo(json("{}"));
    }

    @Test
    void anExpiryRecordedByAnAcquireAndARevocationNameWhoMadeThem() {
        JsonNode old = acquire(writer("alice"), "taken-over", "job", "h", 30).body();
        String oldId = old.get("leaseId").asString();
        backdateExpiry(oldId);
        String expiresAt = api.get("/v1/leases/" + oldId, writer("alice")).body().get("expiresAt").asString();

        Api.Response next = acquire(writer("bob"), "taken-over", "job", "h2", 30);
        assertThat(next.status()).isEqualTo(201);
        JsonNode expired = api.get("/v1/leases/" + oldId + "/events", writer("alice")).body().get("items").get(1);
        assertThat(expired.get("type").asString()).isEqualTo("EXPIRED");
        assertThat(expired.get("principal").asString()).isEqualTo("system:acquire");
        assertThat(expired.get("traceId").asString()).isEqualTo(next.header("X-Trace-Id"));
        assertThat(expired.get("fencingToken").asLong()).isEqualTo(old.get("fencingToken").asLong());
        assertThat(expired.get("details")).isEqualTo(json("{\"expiresAt\": \"%s\"}".formatted(expiresAt)));

        String nextId = next.body().get("leaseId").asString();
        Api.Response revoked = revoke(admin("root"), nextId, "maintenance window");
        assertThat(revoked.status()).isEqualTo(200);
        JsonNode revokedEvent = api.get("/v1/leases/" + nextId + "/events", writer("bob")).body().get("items").get(1);
        assertThat(revokedEvent.get("type").asString()).isEqualTo("REVOKED");
        assertThat(revokedEvent.get("principal").asString()).isEqualTo("root");
        assertThat(revokedEvent.get("at").asString()).isEqualTo(revoked.body().get("endedAt").asString());
        assertThat(revokedEvent.get("details")).isEqualTo(json("{\"reason\": \"maintenance window\"}"));
    }

    private static JsonNode json(String text) {
        return tools.jackson.databind.json.JsonMapper.builder().build().readTree(text);
    }
}
