package io.leasekeeper.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Only a W3C Trace Context header reaches the tracer; anything else starts a new trace. */
class TraceparentGuardTest {

    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String PARENT = "00f067aa0ba902b7";

    @Test
    void theW3cGrammarPasses() {
        for (String valid : List.of("00-" + TRACE + "-" + PARENT + "-01", "00-" + TRACE + "-" + PARENT + "-00",
                "01-" + TRACE + "-" + PARENT + "-01", "01-" + TRACE + "-" + PARENT + "-01-future-fields")) {
            assertThat(TraceparentGuard.isValid(valid)).as(valid).isTrue();
        }
    }

    @Test
    void everythingElseIsHidden() {
        for (String invalid : List.of("", "00", "00-", "00-" + TRACE, "00-" + TRACE + "-" + PARENT,
                "00-" + TRACE + "-" + PARENT + "-1", "ff-" + TRACE + "-" + PARENT + "-01",
                "00-" + TRACE.toUpperCase() + "-" + PARENT + "-01",
                "00-" + "0".repeat(32) + "-" + PARENT + "-01", "00-" + TRACE + "-" + "0".repeat(16) + "-01",
                "00-" + TRACE + "-" + PARENT + "-01-", "01-" + TRACE + "-" + PARENT + "-01x",
                "00_" + TRACE + "_" + PARENT + "_01", "0g-" + TRACE + "-" + PARENT + "-01")) {
            assertThat(TraceparentGuard.isValid(invalid)).as(invalid).isFalse();
        }
    }
}
