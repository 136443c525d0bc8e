package io.leasekeeper.lease;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Arrays;
import java.util.Locale;

/**
 * A lease's state. The only transitions are from ACTIVE: to EXPIRED (its TTL passed; the sweeper or the
 * next acquire records it), RELEASED (its owner let go) or REVOKED (an admin took it away). A lease that
 * has left ACTIVE never returns to it.
 */
public enum LeaseState {
    ACTIVE, EXPIRED, RELEASED, REVOKED;

    @JsonValue
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    static LeaseState fromWireName(String name) {
        return Arrays.stream(values()).filter(s -> s.wireName().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException(
                        "must be one of active, expired, released, revoked, any"));
    }
}
