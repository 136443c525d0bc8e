package io.leasekeeper.key;

import java.util.Locale;
import java.util.regex.Pattern;

/** Program, actor and operation names: 1..63 of [A-Za-z0-9._-], starting with a letter or digit, lowercased. */
public final class Names {

    /** A name as the contract spells it, anchored: the OpenAPI document's pattern for names too. */
    public static final String PATTERN = "^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$";
    private static final Pattern NAME = Pattern.compile(PATTERN);

    private Names() {
    }

    /** The lowercased name; throws IllegalArgumentException when it is not a valid name. */
    public static String normalize(String raw) {
        if (raw == null || !NAME.matcher(raw).matches()) {
            throw new IllegalArgumentException(
                    "must be 1..63 characters of [A-Za-z0-9._-] starting with a letter or digit");
        }
        return raw.toLowerCase(Locale.ROOT);
    }
}
