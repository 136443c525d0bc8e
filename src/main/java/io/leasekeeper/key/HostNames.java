package io.leasekeeper.key;

import com.ibm.icu.text.IDNA;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * DNS host names in one spelling each: trimmed, one trailing dot dropped, mapped to ASCII by UTS #46
 * IDNA (ICU4J, nontransitional, STD3 rules), lowercased; labels of 1..63 letters, digits and hyphens,
 * at most 253 characters in all.
 */
final class HostNames {

    private static final IDNA UTS46 = IDNA.getUTS46Instance(IDNA.NONTRANSITIONAL_TO_ASCII | IDNA.USE_STD3_RULES
            | IDNA.CHECK_BIDI | IDNA.CHECK_CONTEXTJ | IDNA.CHECK_CONTEXTO);
    private static final Pattern LABEL = Pattern.compile("[a-z0-9-]{1,63}");
    private static final Pattern NUMERIC = Pattern.compile("[0-9]+|0[xX][0-9a-fA-F]*");

    private HostNames() {
    }

    /** The normalized ASCII host name, or IllegalArgumentException saying why it is not one. */
    static String normalize(String raw) {
        String value = raw.strip();
        if (value.endsWith(".")) {
            value = value.substring(0, value.length() - 1);
        }
        if (value.isEmpty()) {
            throw new IllegalArgumentException("must be a host name");
        }
        StringBuilder ascii = new StringBuilder();
        IDNA.Info info = new IDNA.Info();
        UTS46.nameToASCII(value, ascii, info);
        if (info.hasErrors()) {
            throw new IllegalArgumentException("is not a valid internationalized host name (UTS #46)");
        }
        String host = ascii.toString().toLowerCase(Locale.ROOT);
        if (host.length() > 253) {
            throw new IllegalArgumentException("must be at most 253 characters in ASCII form");
        }
        String[] labels = host.split("\\.", -1);
        for (String label : labels) {
            if (!LABEL.matcher(label).matches()) {
                throw new IllegalArgumentException("must be labels of 1..63 letters, digits or hyphens");
            }
        }
        // A numeric last label reads as an IPv4 address to many resolvers (010.0.0.1, 0x7f.1): such a
        // name is either a valid address (then it is an ip target) or ambiguous, and refused.
        if (NUMERIC.matcher(labels[labels.length - 1]).matches()) {
            throw new IllegalArgumentException("looks like an IP address but is not one in canonical form");
        }
        return host;
    }
}
