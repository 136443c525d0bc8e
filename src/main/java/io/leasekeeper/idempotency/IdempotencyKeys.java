package io.leasekeeper.idempotency;

import java.util.Optional;
import java.util.regex.Pattern;

/** The {@code Idempotency-Key} header: a structured-field string (quotes optional here) of 1..255 printable ASCII. */
public final class IdempotencyKeys {

    public static final String HEADER = "Idempotency-Key";
    /** Set to {@code true} on an answer replayed from a request's first answer. */
    public static final String REPLAYED_HEADER = "Idempotent-Replayed";
    private static final Pattern KEY = Pattern.compile("\"?([\\x21\\x23-\\x7E]{1,255})\"?");

    private IdempotencyKeys() {
    }

    /** The key a client sent, or empty when the header is absent or not a valid key. */
    public static Optional<String> parse(String header) {
        if (header == null) {
            return Optional.empty();
        }
        var m = KEY.matcher(header.strip());
        return m.matches() ? Optional.of(m.group(1)) : Optional.empty();
    }
}
