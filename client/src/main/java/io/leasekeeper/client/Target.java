package io.leasekeeper.client;

import java.util.Objects;

/** What a lease is on: a type ({@code opaque}, …) and a value, which the service normalizes. */
public record Target(String type, String value) {

    public Target {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(value, "value");
    }

    public static Target opaque(String value) {
        return new Target("opaque", value);
    }
}
