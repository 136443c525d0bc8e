package io.leasekeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Contract revision 1.2, "Keys that cannot deceive": what a diagnostic shows a person of a key, holder or reason. */
class VisibleTest {

    @Test
    void invisibleCharactersAreWrittenAsTheirEscapes() {
        assertThat(Visible.of("pod\u200B-b", StandardCharsets.UTF_8)).isEqualTo("pod\\u200B-b");
        assertThat(Visible.of("\uD83D\uDC68\u200D\uD83D\uDCBB", StandardCharsets.UTF_8))
                .as("a joiner inside an emoji sequence").isEqualTo("\uD83D\uDC68\\u200D\uD83D\uDCBB");
        assertThat(Visible.of("abc\u202Efed", StandardCharsets.UTF_8)).isEqualTo("abc\\u202Efed");
        assertThat(Visible.of("a\u2066b\u2069\u061C\u200E\u200F\uFEFF", StandardCharsets.UTF_8))
                .isEqualTo("a\\u2066b\\u2069\\u061C\\u200E\\u200F\\uFEFF");
        assertThat(Visible.of("tab\there\u0007\u2028", StandardCharsets.UTF_8))
                .isEqualTo("tab\\u0009here\\u0007\\u2028");
        assertThat(Visible.of("no\u00A0break\u3000wide", StandardCharsets.UTF_8))
                .as("a space other than U+0020 passes for one").isEqualTo("no\\u00A0break\\u3000wide");
        assertThat(Visible.of("\u3164x\uFE0F\u034F", StandardCharsets.UTF_8)).isEqualTo("\\u3164x\\uFE0F\\u034F");
        assertThat(Visible.of("tag\uDB40\uDC01", StandardCharsets.UTF_8)).isEqualTo("tag\\U000E0001");
        assertThat(Visible.of("lone\uD800", StandardCharsets.UTF_8)).isEqualTo("lone\\uD800");
    }

    @Test
    void aBackslashIsDoubledSoThatTypedEscapesCannotPassForMadeOnes() {
        assertThat(Visible.of("pod\\u200B-b", StandardCharsets.UTF_8)).isEqualTo("pod\\\\u200B-b");
        assertThat(Visible.of("pod\\u200B-b", StandardCharsets.UTF_8))
                .isNotEqualTo(Visible.of("pod\u200B-b", StandardCharsets.UTF_8));
    }

    @Test
    void visibleTextIsKeptAsItIs() {
        String text = "leasekeeper: 409 LEASE_HELD (held by owner bøb, holder pod-é/7 \uD83D\uDE80, until 2026-12-05)";

        assertThat(Visible.of(text, StandardCharsets.UTF_8)).isEqualTo(text);
    }

    @Test
    void whatTheOutputsEncodingCannotWriteIsEscapedInsteadOfBecomingAQuestionMark() {
        assertThat(Visible.of("pod-é \uD83D\uDE80", StandardCharsets.US_ASCII)).isEqualTo("pod-\\u00E9 \\U0001F680");
        assertThat(Visible.of("pod-é", StandardCharsets.ISO_8859_1)).isEqualTo("pod-é");
    }
}
