package io.leasekeeper.wait;

import java.util.Arrays;
import java.util.Optional;

/**
 * The notifications of freed keys, sent by the transactions that free a key someone waits for (release,
 * revoke, an expiry recorded by an acquire or the sweeper) and received by every instance's
 * {@link FreedKeysListener}. PostgreSQL delivers a notification when its transaction commits, never when it
 * rolls back. The payload is the freed keys' ids, comma-separated, or {@code *} for every key.
 */
public final class FreedKeys {

    public static final String CHANNEL = "leasekeeper_key_freed";
    static final String ALL = "*";
    /** PostgreSQL refuses a payload of 8000 bytes or more; a longer list wakes every waiter instead. */
    static final int MAX_PAYLOAD = 7_900;

    private FreedKeys() {
    }

    /** The payload naming these keys (comma-separated ids). */
    public static String payload(String keyIds) {
        return keyIds.length() > MAX_PAYLOAD ? ALL : keyIds;
    }

    /** The key ids of a payload; empty for every key (or a payload this version cannot read). */
    static Optional<long[]> keyIds(String payload) {
        if (payload == null || payload.isEmpty() || ALL.equals(payload)) {
            return Optional.empty();
        }
        try {
            return Optional.of(Arrays.stream(payload.split(",")).mapToLong(Long::parseLong).toArray());
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }
}
