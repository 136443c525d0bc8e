package io.leasekeeper.sweeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.IntegrationTest;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

/**
 * The schedules themselves, switched on with short intervals. The context is closed afterwards so that
 * its background jobs never touch the rows of other test classes.
 */
@TestPropertySource(properties = {
        "leasekeeper.sweeper.enabled=true", "leasekeeper.sweeper.interval=100ms",
        "leasekeeper.idempotency.cleanup-enabled=true", "leasekeeper.idempotency.retention=1s",
        "leasekeeper.idempotency.cleanup-interval=100ms"})
@DirtiesContext
class ScheduledJobsTest extends IntegrationTest {

    @Test
    void theScheduledSweeperRecordsDueExpiriesByItself() {
        String id = acquire(writer("alice"), "scheduled", "job", "h", 30).body().get("leaseId").asString();
        backdateExpiry(id);
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() ->
                jdbc.sql("SELECT state FROM lease WHERE id = CAST(:id AS uuid)").param("id", id)
                        .query(String.class).single().equals("expired"));
        assertThat(eventTypes(id)).containsExactly("ACQUIRED", "EXPIRED");
    }

    @Test
    void theScheduledRetentionJobDeletesIdempotencyRecordsPastTheirRetention() {
        var response = api.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/leases"))
                .header("Content-Type", "application/json").header("Idempotency-Key", "gone-soon")
                .POST(HttpRequest.BodyPublishers.ofString(
                        "{\"target\":{\"type\":\"opaque\",\"value\":\"idem\"},\"actor\":\"job\",\"holder\":\"h\",\"ttlSeconds\":30}")),
                writer("alice"));
        assertThat(response.status()).isEqualTo(201);
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).until(() ->
                jdbc.sql("SELECT count(*) FROM idempotency_record WHERE tenant = :t").param("t", tenant)
                        .query(Long.class).single() == 0);
    }
}
