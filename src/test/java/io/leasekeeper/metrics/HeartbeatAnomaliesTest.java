package io.leasekeeper.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.IntegrationTest;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * Contract 1.1, "Tenant limits": each renew is measured against the lease's TTL since its previous renew (or its
 * grant); under a tenth is counted early, over nine tenths late, both still renewed. Time is moved by backdating
 * the lease's last beat with SQL, never by waiting.
 */
class HeartbeatAnomaliesTest extends IntegrationTest {

    @Autowired
    MeterRegistry registry;

    @Test
    void renewalsFarTooSoonOrDangerouslyLateAreCountedByKindAndStillRenew() {
        var lease = acquire(writer("alice"), "nightly", "report", "pod-1", 60).body();
        String id = lease.get("leaseId").asString();
        long token = lease.get("fencingToken").asLong();
        double early = anomalies("early");
        double late = anomalies("late");

        assertThat(renew(writer("alice"), id, token).status()).isEqualTo(200); // at once after the grant
        assertThat(anomalies("early") - early).isEqualTo(1);

        lastBeatSecondsAgo(id, 57); // 57 of 60 s: over nine tenths
        assertThat(renew(writer("alice"), id, token).status()).isEqualTo(200);
        assertThat(anomalies("late") - late).isEqualTo(1);

        lastBeatSecondsAgo(id, 30); // halfway: as a holder renewing at a third or half of its TTL does
        assertThat(renew(writer("alice"), id, token).status()).isEqualTo(200);
        assertThat(anomalies("early") - early).isEqualTo(1);
        assertThat(anomalies("late") - late).isEqualTo(1);
    }

    @Test
    void aRefusedRenewIsNoHeartbeat() {
        var lease = acquire(writer("alice"), "nightly", "report", "pod-1", 60).body();
        double early = anomalies("early");

        assertThat(renew(writer("alice"), lease.get("leaseId").asString(), lease.get("fencingToken").asLong() + 1)
                .code()).isEqualTo("FENCING_TOKEN_MISMATCH");

        assertThat(anomalies("early")).isEqualTo(early);
    }

    /** The lease was last renewed (or granted) that long ago by the database's clock, and expires as its TTL says. */
    private void lastBeatSecondsAgo(String leaseId, int seconds) {
        int updated = jdbc.sql("""
                UPDATE lease SET renewed_at = lease_now() - make_interval(secs => :s),
                                 expires_at = lease_now() - make_interval(secs => :s) + make_interval(secs => ttl_seconds)
                WHERE id = CAST(:id AS uuid)
                """).params(Map.of("s", seconds, "id", leaseId)).update();
        assertThat(updated).isEqualTo(1);
    }

    private double anomalies(String kind) {
        return registry.get("leasekeeper.heartbeat.anomalies").tag("kind", kind).counter().count();
    }
}
