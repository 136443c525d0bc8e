package io.leasekeeper.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.Scrape;
import io.leasekeeper.support.TestTokens;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.TestPropertySource;

/** The optional tenant tag on the operation timers: one value per tenant up to the cap, then {@code other}. */
@TestPropertySource(properties = {"leasekeeper.metrics.tenant-tag=true", "leasekeeper.metrics.max-tenants=2"})
class TenantTagTest extends IntegrationTest {

    private static final String TIMER = "leasekeeper_operation_seconds_count";

    @Test
    void theFirstTenantsUpToTheCapAreTaggedByNameAndTheRestShareOther() {
        String first = tenant + "-a";
        String second = tenant + "-b";
        String third = tenant + "-c";
        for (String t : new String[] {first, second, third, third}) {
            assertThat(api.post("/v1/leases", TestTokens.token("alice", t, TestTokens.WRITE),
                    Api.acquireBody("tagged-" + t, "job", "h", 30)).status()).isIn(201, 409);
        }
        // Refused by authorization (no write scope): the tenant is known all the same.
        assertThat(api.post("/v1/leases", TestTokens.token("alice", first, TestTokens.READ),
                Api.acquireBody("read-only", "job", "h", 30)).code()).isEqualTo("INSUFFICIENT_SCOPE");
        assertThat(api.post("/v1/leases", null, Api.acquireBody("anonymous", "job", "h", 30)).code())
                .isEqualTo("UNAUTHENTICATED");

        Scrape scrape = Scrape.of(managementPort);
        assertThat(scrape.sum(TIMER, "operation", "acquire", "outcome", "OK", "tenant", first)).isEqualTo(1);
        assertThat(scrape.sum(TIMER, "operation", "acquire", "outcome", "OK", "tenant", second)).isEqualTo(1);
        assertThat(scrape.sum(TIMER, "operation", "acquire", "tenant", third)).isZero();
        assertThat(scrape.sum(TIMER, "operation", "acquire", "tenant", OperationMetrics.OTHER_TENANTS)).isEqualTo(2);
        assertThat(scrape.sum(TIMER, "operation", "acquire", "outcome", "INSUFFICIENT_SCOPE", "tenant", first))
                .isEqualTo(1);
        assertThat(scrape.sum(TIMER, "operation", "acquire", "outcome", "UNAUTHENTICATED",
                "tenant", OperationMetrics.NO_TENANT)).isEqualTo(1);
        assertThat(scrape.matching(TIMER)).isNotEmpty().allSatisfy(s ->
                assertThat(s.labels().keySet()).containsOnly("operation", "outcome", "status", "tenant", "application"));
    }
}
