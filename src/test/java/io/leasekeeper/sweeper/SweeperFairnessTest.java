package io.leasekeeper.sweeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.OwnDatabase;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ContextConfiguration;
import org.springframework.test.context.TestPropertySource;

/**
 * The sweeper works one tenant at a time, in tenant order, and a run that spends its batches on one tenant's
 * backlog leaves the next run to start after that tenant: a backlog never starves the tenants after it. One worker,
 * so that a run's hundred batches are exactly the backlog's first 2,500 leases.
 *
 * <p>On a database of its own ({@link OwnDatabase}): what a run reaches depends on every due lease of every tenant
 * and on every other sweeper of the database. In the shared database it failed in full runs and passed alone: a
 * tenant left due by an earlier run sorting before the backlog (an earlier run of this test, in a database kept
 * between runs, left "0a-…" with 2,600 due leases) took the run's batches. A failure names the due tenants.
 */
@TestPropertySource(properties = {"leasekeeper.sweeper.batch-size=25", "leasekeeper.sweeper.workers=1"})
@ContextConfiguration(initializers = OwnDatabase.class)
@DirtiesContext
class SweeperFairnessTest extends IntegrationTest {

    @Autowired
    LeaseSweeper sweeper;

    @Test
    void aRunThatSpentItsBatchesOnOneTenantsBacklogIsFollowedByOneThatStartsAfterThatTenant() {
        String backlogged = "0a-" + tenant;
        String after = "0b-" + tenant;
        seedDue(backlogged, 2 * LeaseSweeper.MAX_BATCHES_PER_RUN * 25 + 100);
        seedDue(after, 1);

        String due = dueTenants();
        sweeper.sweepDue();
        assertThat(dueOf(after)).as("the first run spent its batches on the backlog (due before it: %s)", due)
                .isEqualTo(1);
        assertThat(dueOf(backlogged)).isGreaterThan(LeaseSweeper.MAX_BATCHES_PER_RUN * 25L);

        due = dueTenants();
        sweeper.sweepDue();
        assertThat(dueOf(after)).as("the second run started after the backlogged tenant (due before it: %s)", due)
                .isZero();
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

    /** The tenants with due leases and how many each, for a failure's message. */
    private String dueTenants() {
        return jdbc.sql("""
                SELECT string_agg(tenant || ': ' || n, ', ' ORDER BY tenant) FROM (
                    SELECT tenant, count(*) AS n FROM lease WHERE state = 'active' AND expires_at <= lease_now()
                    GROUP BY tenant) AS due
                """).query(String.class).single();
    }

    private long dueOf(String tenantName) {
        return jdbc.sql("SELECT count(*) FROM lease WHERE tenant = :tenant AND state = 'active'")
                .param("tenant", tenantName).query(Long.class).single();
    }
}
