package io.leasekeeper.client;

import java.time.Duration;

/**
 * How a held lease is kept: renewed every {@code renewFraction} of its TTL (default a third); its local
 * deadline kept {@code margin} short of the service's expiry (default 1 s, at most a third of the TTL is
 * used); watched (revision 1.1) so that a revoke is known within a second, unless {@code watch} is false.
 */
public record HoldOptions(double renewFraction, Duration margin, boolean watch) {

    public HoldOptions {
        if (!(renewFraction > 0 && renewFraction < 1)) {
            throw new IllegalArgumentException("renewFraction must be between 0 and 1");
        }
        if (margin.isNegative()) {
            throw new IllegalArgumentException("margin must not be negative");
        }
    }

    public static HoldOptions defaults() {
        return new HoldOptions(1.0 / 3, Duration.ofSeconds(1), true);
    }

    public HoldOptions withMargin(Duration margin) {
        return new HoldOptions(renewFraction, margin, watch);
    }

    public HoldOptions withWatch(boolean watch) {
        return new HoldOptions(renewFraction, margin, watch);
    }
}
