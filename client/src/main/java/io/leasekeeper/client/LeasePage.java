package io.leasekeeper.client;

import java.util.List;

/** One page of a list; {@code nextCursor} null on the last. */
public record LeasePage(List<Lease> items, String nextCursor) {
}
