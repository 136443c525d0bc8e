package io.leasekeeper.target;

import java.util.Objects;

/** A normalized target: only {@link #of} makes one, so its value is always in normal form. */
public record Target(TargetType type, String value) {

    public Target {
        Objects.requireNonNull(type);
        Objects.requireNonNull(value);
    }

    /** Normalizes a raw value of the given type; throws IllegalArgumentException when it is not valid. */
    public static Target of(TargetType type, String rawValue) {
        if (rawValue == null) {
            throw new IllegalArgumentException("is required");
        }
        return new Target(type, type.normalize(rawValue));
    }
}
