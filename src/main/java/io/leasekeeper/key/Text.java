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

    /** True when the text has NUL or an unpaired surrogate: it cannot be stored at all. */
    public static boolean unstorable(String text) {
        return text.indexOf('\u0000') >= 0
                || text.codePoints().anyMatch(cp -> Character.getType(cp) == Character.SURROGATE);
    }
}
