package io.leasekeeper.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.replication.ReplicationHealthIndicator.Settings;
import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Issue 18, "Replication stated and checked": the readiness details show the primary's synchronous_commit and
 * synchronous_standby_names as the database reports them, and whether a commit waits for a standby; the start
 * log's sentence says what a failover can lose. The test cluster has no standby.
 */
class ReplicationReportTest extends IntegrationTest {

    @Test
    void theReadinessDetailsShowTheDatabasesReplicationSettings() {
        Api.Response readiness = new Api(managementPort).get("/actuator/health/readiness", null);

        assertThat(readiness.status()).isEqualTo(200);
        var replication = readiness.body().get("components").get("replication");
        assertThat(replication.get("status").asString()).isEqualTo("UP");
        assertThat(replication.get("details").get("synchronousCommit").asString())
                .isEqualTo(jdbc.sql("SHOW synchronous_commit").query(String.class).single());
        assertThat(replication.get("details").get("synchronousStandbyNames").asString())
                .isEqualTo(jdbc.sql("SHOW synchronous_standby_names").query(String.class).single()).isEmpty();
        assertThat(replication.get("details").get("synchronous").asBoolean()).isFalse();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "on           | ANY 1 (db-2, db-3) | true",
            "remote_apply | db-2               | true",
            "remote_write | FIRST 1 (db-2)     | true",
            "local        | ANY 1 (db-2, db-3) | false",
            "off          | db-2               | false",
            "on           | ''                 | false"})
    void aCommitWaitsForAStandbyOnlyWithStandbysNamedAndACommitLevelThatWaits(String commit, String names,
                                                                          boolean synchronous) {
        Settings settings = new Settings(commit, names);
        assertThat(settings.synchronous()).isEqualTo(synchronous);
        assertThat(settings.describe()).contains("synchronous_commit=" + commit)
                .contains(synchronous ? "loses no granted lease" : "a larger fencing token than any it had");
    }
}
