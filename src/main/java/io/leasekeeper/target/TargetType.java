package io.leasekeeper.target;

import java.text.Normalizer;
import java.util.Arrays;
import java.util.Optional;

/** The kinds of target a lease can be taken on; each normalizes its values its own way. */
public enum TargetType {

    /** Any string: Unicode NFC, surrounding whitespace trimmed, 1..512 characters, no control characters. */
    OPAQUE("opaque") {
        @Override
        public String normalize(String raw) {
            String value = Normalizer.normalize(raw, Normalizer.Form.NFC).strip();
            int length = value.codePointCount(0, value.length());
            if (length < 1 || length > 512) {
                throw new IllegalArgumentException("must be 1..512 characters after trimming");
            }
            if (value.codePoints().anyMatch(cp -> Character.getType(cp) == Character.CONTROL)) {
                throw new IllegalArgumentException("must not contain control characters");
            }
            return value;
        }
    };

    private final String wireName;

    TargetType(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }

    /** The normalized form of a raw value; throws IllegalArgumentException saying why it is not valid. */
    public abstract String normalize(String raw);

    public static Optional<TargetType> fromWireName(String name) {
        return Arrays.stream(values()).filter(t -> t.wireName.equals(name)).findFirst();
    }

    /** Parses a wire name, throwing IllegalArgumentException that lists the known types. */
    public static TargetType parse(String name) {
        return fromWireName(name).orElseThrow(() -> new IllegalArgumentException(
                "unknown target type; known types: " + Arrays.stream(values()).map(TargetType::wireName).toList()));
    }
}
