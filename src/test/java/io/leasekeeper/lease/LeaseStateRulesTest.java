package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.key.LeaseKey;
import io.leasekeeper.key.Target;
import io.leasekeeper.key.TargetType;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class LeaseStateRulesTest {

    static final Instant EXPIRES = Instant.parse("2026-12-02T18:00:40.456Z");

    @ParameterizedTest(name = "{0} at expiry{1}ms reads {2}")
    @CsvSource({
            "ACTIVE, -1, ACTIVE",
            "ACTIVE, 0, EXPIRED",      // at the exact instant of expiry the lease has expired
            "ACTIVE, 1, EXPIRED",
            "RELEASED, -1000, RELEASED",
            "REVOKED, -1000, REVOKED",
            "EXPIRED, 5, EXPIRED"})
    void effectiveStateIsActiveOnlyStrictlyBeforeExpiry(LeaseState stored, long offsetMs, LeaseState expected) {
        Lease lease = lease(stored);
        Instant now = EXPIRES.plusMillis(offsetMs);
        assertThat(lease.stateAt(now)).isEqualTo(expected);
        assertThat(lease.remainingMillisAt(now)).isEqualTo(expected == LeaseState.ACTIVE ? -offsetMs : 0);
    }

    @ParameterizedTest
    @CsvSource({"-1, active, ", "0, expired, expired"})
    void anExpiredButUnsweptLeaseIsShownAsTheSweeperWillRecordIt(long offsetMs, String state, String endReason) {
        LeaseView view = LeaseView.of(lease(LeaseState.ACTIVE), EXPIRES.plusMillis(offsetMs));
        assertThat(view.state().wireName()).isEqualTo(state);
        assertThat(view.endReason()).isEqualTo(endReason);
        assertThat(view.endedAt()).isEqualTo(endReason == null ? null : EXPIRES);
    }

    private static Lease lease(LeaseState stored) {
        LeaseKey key = new LeaseKey("acme", "default", new Target(TargetType.OPAQUE, "x"), "a", null);
        return new Lease(UUID.randomUUID(), key, "o", "h", 1, stored, EXPIRES.minusSeconds(30), null, EXPIRES,
                EXPIRES.plusSeconds(3600), stored == LeaseState.ACTIVE ? null : EXPIRES.minusSeconds(1),
                stored == LeaseState.ACTIVE ? null : "x", 30, 86400, 0, null, null, Metadata.EMPTY);
    }
}
