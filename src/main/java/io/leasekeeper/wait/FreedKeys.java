package io.leasekeeper.wait;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * The notifications of freed keys, sent by the transactions that free a key someone waits for (release,
 * revoke, an expiry recorded by an acquire or the sweeper) and received by every instance's
 * {@link FreedKeysListener}. PostgreSQL delivers a notification when its transaction commits, never when it
 * rolls back. The payload names the keys, comma-separated: a key's id alone when it is free (a waiter should
 * try it), {@code id>waiter} when the same transaction offered it to that waiting acquire (its row's id in
 * the key's queue; written by the hand-over, lease_hand_over); or {@code *} for every key.
 */
public final class FreedKeys {

    public static final String CHANNEL = "leasekeeper_key_freed";
    /**
     * Every key: what an expiry sends instead of its list when the list would reach PostgreSQL's bound of 8000 bytes
     * for a payload (lease_expire_locked).
     */
    static final String ALL = "*";

    /** A key freed, and the waiter it was offered to (null: free, for a waiter to try). */
    public record Freed(long keyId, UUID offeredTo) {
    }

    private FreedKeys() {
    }

    /** The keys of a payload; empty for every key (or a payload this version cannot read). */
    static Optional<List<Freed>> parse(String payload) {
        if (payload == null || payload.isEmpty() || ALL.equals(payload)) {
            return Optional.empty();
        }
        List<Freed> freed = new ArrayList<>();
        try {
            for (String item : payload.split(",")) {
                int to = item.indexOf('>');
                freed.add(to < 0 ? new Freed(Long.parseLong(item), null)
                        : new Freed(Long.parseLong(item.substring(0, to)), UUID.fromString(item.substring(to + 1))));
            }
        } catch (IllegalArgumentException e) { // NumberFormatException is one
            return Optional.empty();
        }
        return Optional.of(freed);
    }
}
