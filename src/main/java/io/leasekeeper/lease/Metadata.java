package io.leasekeeper.lease;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Map;

/**
 * A lease's {@code metadata}: the client's JSON object, stored and answered as given. Clients put what
 * they like in it, secrets included, so it never reaches a log: {@link #toString()} (used by every
 * record that holds it, and so by Spring's request and response logging) names only its size.
 */
record Metadata(@JsonValue Map<String, Object> values) {

    static final Metadata EMPTY = new Metadata(Map.of());

    @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
    Metadata {
        values = values == null ? Map.of() : values;
    }

    @Override
    public String toString() {
        return "Metadata[" + values.size() + " keys, not shown]";
    }
}
