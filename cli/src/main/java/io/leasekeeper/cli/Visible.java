package io.leasekeeper.cli;

import java.nio.charset.Charset;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.IllegalCharsetNameException;
import java.nio.charset.UnsupportedCharsetException;

/**
 * Text for a person's eyes with nothing hidden (contract revision 1.2, "Keys that cannot deceive"): every
 * character that shows nothing, or shows as a plain space, is written as its escape. Those are the control and
 * format characters (U+200B, U+200D, the bidi controls, U+FEFF, the tag characters…), the line and paragraph
 * separators, every space other than U+0020, a lone surrogate, and the other default-ignorable characters that
 * are letters or marks to Java (the variation selectors, U+034F, the Hangul fillers, U+17B4–U+17B5,
 * U+180B–U+180F). So is a character the output's encoding cannot write, which the stream would turn into
 * {@code ?} (all but ASCII under {@code LANG=C}). Everything else, accented letters and emoji among them, is
 * written as it is.
 *
 * <p>A character of the BMP becomes &#92;u and four hex digits (&#92;u200B), one beyond it &#92;U and eight
 * (&#92;U000E0001); a backslash becomes two, so an escape in the text cannot pass for one made here.
 */
final class Visible {

    private Visible() {
    }

    /** The encoding of standard error, as the JDK chose it (JDK 19 and later name it {@code stderr.encoding}). */
    static Charset standardError() {
        String name = System.getProperty("stderr.encoding", System.getProperty("sun.stderr.encoding",
                System.getProperty("native.encoding")));
        try {
            return name == null ? Charset.defaultCharset() : Charset.forName(name);
        } catch (IllegalCharsetNameException | UnsupportedCharsetException unknown) {
            return Charset.defaultCharset();
        }
    }

    static String of(String text, Charset output) {
        CharsetEncoder encoder = output.newEncoder();
        StringBuilder shown = new StringBuilder(text.length());
        text.codePoints().forEach(c -> {
            if (c == '\\') {
                shown.append("\\\\");
            } else if (hidden(c) || !encoder.canEncode(new String(Character.toChars(c)))) {
                shown.append(c <= 0xFFFF ? String.format("\\u%04X", c) : String.format("\\U%08X", c));
            } else {
                shown.appendCodePoint(c);
            }
        });
        return shown.toString();
    }

    private static boolean hidden(int c) {
        switch (Character.getType(c)) {
            case Character.CONTROL:
            case Character.FORMAT:
            case Character.LINE_SEPARATOR:
            case Character.PARAGRAPH_SEPARATOR:
            case Character.SURROGATE:
                return true;
            case Character.SPACE_SEPARATOR:
                return c != ' ';
            default:
                return c == 0x034F || c == 0x115F || c == 0x1160 || c == 0x17B4 || c == 0x17B5
                        || (c >= 0x180B && c <= 0x180F) || c == 0x3164 || (c >= 0xFE00 && c <= 0xFE0F)
                        || c == 0xFFA0 || (c >= 0xE0100 && c <= 0xE01EF);
        }
    }
}
