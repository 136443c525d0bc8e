package io.leasekeeper.key;

import java.util.Objects;

/** A normalized target: {@link #of} makes one from raw input; the other constructor takes stored, normalized values. */
public record Target(TargetType type, String value) {

    public Target {
        Objects.requireNonNull(type);
        Objects.requireNonNull(value);
    }

    /**
     * Normalizes a raw value of the given type (the result's type may differ: a host that is an IP
     * literal is an ip target); throws IllegalArgumentException when it is not valid.
     */
    public static Target of(TargetType type, String rawValue) {
        if (rawValue == null) {
            throw new IllegalArgumentException("is required");
        }
        if (rawValue.length() > 4096) {
            throw new IllegalArgumentException("is too long");
        }
        return type.normalizeValue(rawValue);
    }
}
