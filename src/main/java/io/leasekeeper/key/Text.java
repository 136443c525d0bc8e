package io.leasekeeper.key;

/** What text PostgreSQL can store and a key may hold. */
public final class Text {

    private Text() {
    }

    /**
     * True when the text has a control character (NUL among them, which PostgreSQL's text and jsonb
     * refuse) or an unpaired surrogate (which has no UTF-8 form).
     */
    public static boolean hasControlOrUnpaired(String text) {
        return text.codePoints().anyMatch(cp -> {
            int type = Character.getType(cp);
            return type == Character.CONTROL || type == Character.SURROGATE;
        });
    }

    /**
     * True when the text has a Unicode bidirectional formatting character: the Arabic letter mark (U+061C), the
     * left-to-right and right-to-left marks (U+200E, U+200F), an embedding, override or pop (U+202A..U+202E) or an
     * isolate (U+2066..U+2069). Each reorders the characters around it on screen, so a key holding one can be shown
     * to an operator as another key (a "Trojan Source" spelling). Other invisible characters (U+200B, or U+200D
     * joining an emoji sequence) do not reorder anything and are kept; whatever shows a key makes them visible.
     */
    public static boolean hasBidiControl(String text) {
        return text.chars().anyMatch(c -> c == 0x061C || c == 0x200E || c == 0x200F
                || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069));
    }

    /** What {@link #hasBidiControl} refuses, as a field's message says it. */
    public static final String NO_BIDI_CONTROLS = "must not contain bidirectional formatting characters"
            + " (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069): they make text show in another order"
            + " than it is stored";

    /** True when the text has NUL or an unpaired surrogate: it cannot be stored at all. */
    public static boolean unstorable(String text) {
        return text.indexOf('\u0000') >= 0
                || text.codePoints().anyMatch(cp -> Character.getType(cp) == Character.SURROGATE);
    }
}
