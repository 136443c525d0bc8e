package io.leasekeeper.key;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class TargetNormalizationTest {

    @Test
    void opaqueValuesAreNfcAndTrimmed() {
        // "e" + combining acute accent becomes the single precomposed "é".
        assertThat(Target.of(TargetType.OPAQUE, "  cafe\u0301 \t").value()).isEqualTo("caf\u00e9");
        assertThat(Target.of(TargetType.OPAQUE, "x".repeat(512)).value()).hasSize(512);
        // 512 characters, counted as code points, not UTF-16 units.
        assertThat(Target.of(TargetType.OPAQUE, "\uD83D\uDE00".repeat(512)).value()).hasSize(1024);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "   ", "a\u0000b", "a\nb", "a\u007fb"})
    void opaqueValuesThatAreEmptyOrHoldControlCharactersAreRejected(String raw) {
        assertThatIllegalArgumentException().isThrownBy(() -> Target.of(TargetType.OPAQUE, raw));
    }

    @Test
    void opaqueValuesOver512CharactersAreRejected() {
        assertThatIllegalArgumentException().isThrownBy(() -> Target.of(TargetType.OPAQUE, "x".repeat(513)));
    }

    @Test
    void unknownTargetTypesAreRejectedNamingTheKnownOnes() {
        assertThatIllegalArgumentException().isThrownBy(() -> TargetType.parse("dns")).withMessageContaining("opaque");
        assertThatIllegalArgumentException().isThrownBy(() -> TargetType.parse("OPAQUE"));
    }

    @ParameterizedTest
    @CsvSource({"Indexer, indexer", "a, a", "9job.v2_x-y, 9job.v2_x-y"})
    void namesAreLowercased(String raw, String normalized) {
        assertThat(Names.normalize(raw)).isEqualTo(normalized);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "-job", ".job", "_job", "job name", "jöb", "a/b"})
    void invalidNamesAreRejected(String raw) {
        assertThatIllegalArgumentException().isThrownBy(() -> Names.normalize(raw));
    }

    @Test
    void namesAreAtMost63Characters() {
        assertThat(Names.normalize("a".repeat(63))).hasSize(63);
        assertThatIllegalArgumentException().isThrownBy(() -> Names.normalize("a".repeat(64)));
    }

    @Test
    void theCanonicalKeyPercentEncodesEveryByteOutsideTheUnreservedSet() {
        LeaseKey key = new LeaseKey("acme", "default", Target.of(TargetType.OPAQUE, "repo/main"), "indexer", null);
        assertThat(key.canonical()).isEqualTo("acme/default/opaque:repo%2Fmain/indexer");
        LeaseKey withOperation = new LeaseKey("acme", "p", Target.of(TargetType.OPAQUE, "a b~é%"), "x", "sync");
        assertThat(withOperation.canonical()).isEqualTo("acme/p/opaque:a%20b~%C3%A9%25/x/sync");
        assertThat(LeaseKey.percentEncode("AZaz09-._~")).isEqualTo("AZaz09-._~");
    }
}
