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

    /** Contract 1.2, "Keys that cannot deceive": U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069. */
    @ParameterizedTest
    @ValueSource(strings = {"\u061C", "\u200E", "\u200F", "\u202A", "\u202B", "\u202C", "\u202D", "\u202E",
            "\u2066", "\u2067", "\u2068", "\u2069"})
    void noBidiControlReachesAKeyAsIs(String control) {
        assertThatIllegalArgumentException().isThrownBy(() -> Target.of(TargetType.OPAQUE, "invoice" + control + "fdp.txt"))
                .withMessageStartingWith("must not contain bidirectional formatting characters");
        // At the end of a value too: trimming strips whitespace, which these are not.
        assertThatIllegalArgumentException().isThrownBy(() -> Target.of(TargetType.OPAQUE, "invoice" + control));
        // A host refuses them by UTS #46; a URL's path shows them percent-encoded.
        assertThatIllegalArgumentException().isThrownBy(() -> Target.of(TargetType.HOST, "exa" + control + "mple.com"));
        assertThat(Target.of(TargetType.URL, "https://example.com/a" + control + "b").value())
                .doesNotContain(control).containsPattern("/a%[0-9A-F]{2}%[0-9A-F]{2}(%[0-9A-F]{2})?b");
    }

    @Test
    void invisibleCharactersThatReorderNothingAreKept() {
        assertThat(Target.of(TargetType.OPAQUE, "a\u200Bb").value()).isEqualTo("a\u200Bb");
        String technologist = "\uD83D\uDC69\u200D\uD83D\uDCBB";
        assertThat(Target.of(TargetType.OPAQUE, technologist).value()).isEqualTo(technologist);
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
