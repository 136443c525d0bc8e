package io.leasekeeper.lease;

import java.time.Instant;

/** A lease as read at {@code now}, the database time of the statement that read it. */
record LeaseRead(Instant now, Lease lease) {
}
