package io.leasekeeper.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.OwnDatabase;
import io.leasekeeper.support.Scrape;
import io.leasekeeper.sweeper.LeaseSweeper;
import java.net.URI;
import java.net.http.HttpRequest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ContextConfiguration;
import tools.jackson.databind.json.JsonMapper;

/**
 * The service's meters as Prometheus scrapes them from the management port, moved by real requests. On a database of
 * its own ({@link OwnDatabase}): the lease gauges and a sweeper run count every tenant's leases, and other test
 * classes leave due ones behind (the sweeper is off in tests), often of more tenants than one run reaches.
 */
@ContextConfiguration(initializers = OwnDatabase.class)
@DirtiesContext
class MetricsTest extends IntegrationTest {

    private static final String TIMER = "leasekeeper_operation_seconds_count";

    @Autowired
    LeaseGauges gauges;

    @Autowired
    LeaseSweeper sweeper;

    @Test
    void operationsAreTimedByOutcomeAndTheirConsequencesCounted() {
        Scrape before = Scrape.of(managementPort);

        var lease = acquire(writer("alice"), "metered", "job", "h", 30).body();
        String leaseId = lease.get("leaseId").asString();
        assertThat(acquire(writer("bob"), "metered", "job", "h", 30).code()).isEqualTo("LEASE_HELD");
        assertThat(renew(writer("alice"), leaseId, lease.get("fencingToken").asLong() + 1).code())
                .isEqualTo("FENCING_TOKEN_MISMATCH");
        assertThat(api.post("/v1/leases", null, Api.acquireBody("metered", "job", "h", 30)).code())
                .isEqualTo("UNAUTHENTICATED");
        String body = JsonMapper.builder().build().writeValueAsString(Api.acquireBody("replayed", "job", "h", 30));
        for (int i = 0; i < 2; i++) {
            api.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/leases"))
                    .header("Content-Type", "application/json").header("Idempotency-Key", "metrics-" + tenant)
                    .POST(HttpRequest.BodyPublishers.ofString(body)), writer("carol"));
        }
        assertThat(revoke(admin("root"), leaseId, "metrics test").status()).isEqualTo(200);
        assertThat(api.get("/v1/leases/" + leaseId, reader("dave")).status()).isEqualTo(200);

        Scrape after = Scrape.of(managementPort);
        assertThat(delta(before, after, TIMER, "operation", "acquire", "outcome", "OK")).isEqualTo(3); // alice, carol, carol replayed
        assertThat(delta(before, after, TIMER, "operation", "acquire", "outcome", "LEASE_HELD")).isEqualTo(1);
        assertThat(delta(before, after, TIMER, "operation", "acquire", "outcome", "UNAUTHENTICATED")).isEqualTo(1);
        assertThat(delta(before, after, TIMER, "operation", "renew", "outcome", "FENCING_TOKEN_MISMATCH")).isEqualTo(1);
        assertThat(delta(before, after, TIMER, "operation", "revoke", "outcome", "OK")).isEqualTo(1);
        assertThat(delta(before, after, TIMER, "operation", "inspect", "outcome", "OK")).isEqualTo(1);
        assertThat(delta(before, after, "leasekeeper_acquire_contended_total")).isEqualTo(1);
        assertThat(delta(before, after, "leasekeeper_fencing_mismatches_total", "operation", "renew")).isEqualTo(1);
        assertThat(delta(before, after, "leasekeeper_idempotent_replays_total", "operation", "acquire")).isEqualTo(1);
        assertThat(delta(before, after, "leasekeeper_revocations_total")).isEqualTo(1);

        // Histogram buckets for p50/p99, cumulative up to +Inf.
        assertThat(after.matching("leasekeeper_operation_seconds_bucket", "operation", "acquire", "outcome", "OK"))
                .extracting(s -> s.labels().get("le")).contains("0.005", "0.025", "0.1", "+Inf");
        // The answer's status beside its outcome, whoever answered.
        assertThat(delta(before, after, TIMER, "operation", "acquire", "outcome", "LEASE_HELD", "status", "409"))
                .isEqualTo(1);
        assertThat(delta(before, after, TIMER, "operation", "acquire", "outcome", "UNAUTHENTICATED", "status", "401"))
                .isEqualTo(1);
        assertThat(delta(before, after, TIMER, "operation", "acquire", "outcome", "OK", "status", "201"))
                .isEqualTo(3);
        // No tag names a key, a lease or a holder.
        assertThat(after.matching(TIMER)).isNotEmpty().allSatisfy(s -> assertThat(s.labels().keySet())
                .containsOnly("operation", "outcome", "status", "application"));
        // What Spring Boot provides beside them: the pool.
        assertThat(after.matching("hikaricp_connections_active")).isNotEmpty();
        // What the request path no longer spends CPU on (application.yml, management.observations): Spring
        // Security's observations of its filter chain, and the HTTP request's own observation and timer (the
        // operation's timer above is the one timing of a request).
        assertThat(after.names()).noneMatch(name -> name.startsWith("spring_security_"))
                .noneMatch(name -> name.startsWith("http_server_requests"));
    }

    @Test
    void expiriesAreCountedByCauseAndTheGaugesShowTheUnsweptLeasesAndTheSweepersLag() {
        String lazily = acquire(writer("alice"), "lapsed", "job", "h", 30).body().get("leaseId").asString();
        String swept = acquire(writer("alice"), "swept", "job", "h", 30).body().get("leaseId").asString();
        acquire(writer("alice"), "still-active", "job", "h", 30);
        // The sweeper is off in tests: both leases stay marked active past their (backdated) expiry.
        jdbc.sql("UPDATE lease SET expires_at = lease_now() - interval '90 seconds' WHERE id IN (CAST(:a AS uuid), CAST(:b AS uuid))")
                .param("a", lazily).param("b", swept).update();
        gauges.refresh();
        Scrape before = Scrape.of(managementPort);
        assertThat(before.sum("leasekeeper_leases_unswept")).isGreaterThanOrEqualTo(2);
        assertThat(before.sum("leasekeeper_leases_active")).isGreaterThanOrEqualTo(1);
        assertThat(before.sum("leasekeeper_sweeper_lag_seconds")).isGreaterThanOrEqualTo(90);

        // An acquire finds the key's lease past its TTL and records the expiry itself; then the sweeper.
        assertThat(acquire(writer("bob"), "lapsed", "job", "h", 30).status()).isEqualTo(201);
        assertThat(sweeper.sweepDue()).isGreaterThanOrEqualTo(1);
        assertThat(api.get("/v1/leases/" + swept, writer("alice")).body().get("state").asString()).isEqualTo("expired");
        gauges.refresh();

        Scrape after = Scrape.of(managementPort);
        assertThat(delta(before, after, "leasekeeper_expirations_total", "cause", "acquire")).isEqualTo(1);
        assertThat(delta(before, after, "leasekeeper_expirations_total", "cause", "sweeper")).isGreaterThanOrEqualTo(1);
        assertThat(delta(before, after, "leasekeeper_sweeper_batch_seconds_count")).isGreaterThanOrEqualTo(1);
        assertThat(after.matching("leasekeeper_sweeper_batch_seconds_bucket")).isNotEmpty();
        // Nothing is due any more: nothing unswept, no lag.
        assertThat(after.sum("leasekeeper_leases_unswept")).isZero();
        assertThat(after.sum("leasekeeper_sweeper_lag_seconds")).isZero();
    }

    private static double delta(Scrape before, Scrape after, String name, String... labels) {
        return after.sum(name, labels) - before.sum(name, labels);
    }
}
