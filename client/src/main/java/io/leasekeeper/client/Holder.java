package io.leasekeeper.client;

import java.time.Instant;

/** Who holds a busy key, as a 409 LEASE_HELD tells a contender: never the holder's lease id or token. */
public record Holder(String owner, String holder, Instant expiresAt, long remainingMs) {
}
