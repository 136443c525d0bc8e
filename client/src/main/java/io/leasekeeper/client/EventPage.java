package io.leasekeeper.client;

import java.util.List;

/** One page of a lease's history, oldest first; {@code nextCursor} null on the last. */
public record EventPage(List<LeaseEvent> items, String nextCursor) {
}
