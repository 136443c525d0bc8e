package io.leasekeeper.sweeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

/**
 * The sweeper works one tenant at a time, in tenant order, and a run that spends its batches on one tenant's
 * backlog leaves the next run to start after that tenant: a backlog never starves the tenants after it. One worker,
 * so that a run's hundred batches are exactly the backlog's first 2,500 leases.
 *
 * <p>On a database of its own: what a run reaches depends on every due lease of every tenant and on every other
 * sweeper of the database, and in the shared database earlier test classes leave both (due leases of their
 * tenants; instances and contexts whose sweepers may still run). Shared, the test failed in a full run
 * ("the first run spent its batches on the backlog") and passed alone.
 */
@TestPropertySource(properties = {"leasekeeper.sweeper.batch-size=25", "leasekeeper.sweeper.workers=1"})
@DirtiesContext
class SweeperFairnessTest extends IntegrationTest {

    private static String ownDatabase;

    @DynamicPropertySource
    static void ownDatabase(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", () -> {
            if (ownDatabase == null) {
                ownDatabase = TestDatabase.newDatabase("sweeper_fairness");
            }
            return ownDatabase;
        });
    }

    @AfterAll
    static void dropOwnDatabase() {
        if (ownDatabase != null) {
            TestDatabase.dropDatabase(ownDatabase);
        }
    }

    @Autowired
    LeaseSweeper sweeper;

    @Test
    void aRunThatSpentItsBatchesOnOneTenantsBacklogIsFollowedByOneThatStartsAfterThatTenant() {
        String backlogged = "0a-" + tenant;
        String after = "0b-" + tenant;
        seedDue(backlogged, 2 * LeaseSweeper.MAX_BATCHES_PER_RUN * 25 + 100);
        seedDue(after, 1);

        sweeper.sweepDue();
        assertThat(dueOf(after)).as("the first run spent its batches on the backlog; expired by %s",
                jdbc.sql("SELECT string_agg(principal || ' at ' || at, ', ') FROM lease_event WHERE tenant = :tenant"
                        + " AND type = 'EXPIRED'").param("tenant", after).query(String.class).optional())
                .isEqualTo(1);
        assertThat(dueOf(backlogged)).isGreaterThan(LeaseSweeper.MAX_BATCHES_PER_RUN * 25L);

        sweeper.sweepDue();
        assertThat(dueOf(after)).as("the second run started after the backlogged tenant").isZero();
        assertThat(jdbc.sql("""
                SELECT count(*) FROM lease_event WHERE tenant = :tenant AND type = 'EXPIRED' AND principal = 'system:sweeper'
                """).param("tenant", after).query(Long.class).single()).isEqualTo(1);
    }

    /** Due leases of a tenant on keys of their own, written with SQL (acquiring thousands would take long). */
    private void seedDue(String tenantName, int count) {
        jdbc.sql("""
                WITH k AS (
                    INSERT INTO lease_key (tenant, program, target_type, target_value, actor)
                    SELECT :tenant, 'default', 'opaque', 'seeded-' || n, 'job' FROM generate_series(1, :count) AS n
                    RETURNING tenant, id
                )
                INSERT INTO lease (id, key_id, tenant, owner, holder, fencing_token, state, acquired_at, expires_at,
                                   max_expires_at, ttl_seconds, max_lifetime_seconds)
                SELECT gen_random_uuid(), k.id, k.tenant, 'alice', 'h', 1, 'active', lease_now() - interval '1 minute',
                       lease_now() - interval '1 second', lease_now() + interval '1 day', 30, 86400
                FROM k
                """).param("tenant", tenantName).param("count", count).update();
    }

    private long dueOf(String tenantName) {
        return jdbc.sql("SELECT count(*) FROM lease WHERE tenant = :tenant AND state = 'active'")
                .param("tenant", tenantName).query(Long.class).single();
    }
}
