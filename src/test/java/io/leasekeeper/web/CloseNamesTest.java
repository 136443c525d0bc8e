package io.leasekeeper.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class CloseNamesTest {

    private static final List<String> ACQUIRE = List.of("actor", "holder", "jobId", "lockDelaySeconds", "maxLifetimeSeconds",
            "metadata", "operation", "program", "target", "traceId", "ttlSeconds", "waitSeconds");

    @Test
    void aMisspellingOneEditAwayFindsItsName() {
        assertThat(CloseNames.closest("holdr", ACQUIRE)).isEqualTo("holder");
        assertThat(CloseNames.closest("ttlSecond", ACQUIRE)).isEqualTo("ttlSeconds");
        assertThat(CloseNames.closest("vaule", List.of("type", "value"))).isEqualTo("value");
        assertThat(CloseNames.closest("actro", ACQUIRE)).isEqualTo("actor");
    }

    @Test
    void aPartOfANameFindsIt() {
        assertThat(CloseNames.closest("token", List.of("fencingToken", "ttlSeconds"))).isEqualTo("fencingToken");
        assertThat(CloseNames.closest("delay", ACQUIRE)).isEqualTo("lockDelaySeconds");
    }

    @Test
    void theBeginningOfANameFindsIt() {
        assertThat(CloseNames.closest("ttl", ACQUIRE)).isEqualTo("ttlSeconds");
        assertThat(CloseNames.closest("lockDelay", ACQUIRE)).isEqualTo("lockDelaySeconds");
        assertThat(CloseNames.closest("maxLifetime", ACQUIRE)).isEqualTo("maxLifetimeSeconds");
    }

    @Test
    void caseUnderscoresAndHyphensDoNotCount() {
        assertThat(CloseNames.closest("TTL_seconds", ACQUIRE)).isEqualTo("ttlSeconds");
        assertThat(CloseNames.closest("job-id", ACQUIRE)).isEqualTo("jobId");
        assertThat(CloseNames.closest("HOLDER", ACQUIRE)).isEqualTo("holder");
    }

    @Test
    void aNameCloseToNoneFindsNothing() {
        assertThat(CloseNames.closest("foo", ACQUIRE)).isNull();
        assertThat(CloseNames.closest("t", ACQUIRE)).isNull();
        assertThat(CloseNames.closest("lease", ACQUIRE)).isNull();
        assertThat(CloseNames.closest("x".repeat(10_000), ACQUIRE)).isNull();
    }

    @Test
    void theDistanceCountsASwapOfNeighboursAsOneEdit() {
        assertThat(CloseNames.distance("vaule", "value")).isEqualTo(1);
        assertThat(CloseNames.distance("holdr", "holder")).isEqualTo(1);
        assertThat(CloseNames.distance("", "abc")).isEqualTo(3);
        assertThat(CloseNames.distance("kitten", "sitting")).isEqualTo(3);
    }
}
