package io.leasekeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Durations as cli.md writes them, and the whole seconds the API's fields take. */
class DurationsTest {

    private final Durations durations = new Durations();

    @Test
    void readsTheContractsUnits() {
        assertThat(durations.convert("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(durations.convert("30s")).isEqualTo(Duration.ofSeconds(30));
        assertThat(durations.convert("5m")).isEqualTo(Duration.ofMinutes(5));
        assertThat(durations.convert("1h")).isEqualTo(Duration.ofHours(1));
        assertThat(durations.convert("0")).isZero();
    }

    @Test
    void refusesAnythingElse() {
        for (String bad : new String[] {"", "30", "1.5s", "-1s", "30 s", "5d", "s", "1h30m"}) {
            assertThatThrownBy(() -> durations.convert(bad)).as(bad)
                    .isInstanceOf(CommandLine.TypeConversionException.class);
        }
    }

    @Test
    void apiSecondsAreRoundedUp() {
        assertThat(Durations.seconds(Duration.ofMillis(1500))).isEqualTo(2);
        assertThat(Durations.seconds(Duration.ofMillis(1))).isEqualTo(1);
        assertThat(Durations.seconds(Duration.ofSeconds(30))).isEqualTo(30);
        assertThat(Durations.seconds(Duration.ZERO)).isZero();
    }
}
