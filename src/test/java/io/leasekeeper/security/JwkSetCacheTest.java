package io.leasekeeper.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The JWK set's cache, on a clock the test moves. */
class JwkSetCacheTest {

    private final AtomicLong nanos = new AtomicLong();
    private final AtomicInteger fetches = new AtomicInteger();
    private final JwkSetCache cache = new JwkSetCache(nanos::get);

    private String fetch() {
        return cache.get("uri", () -> "set-" + fetches.incrementAndGet());
    }

    @Test
    void theSetIsFetchedOnceAndAgainWhenItIsMaxAgeOld() {
        assertThat(fetch()).isEqualTo("set-1");
        nanos.addAndGet(JwkSetCache.MAX_AGE.toNanos() - 1);
        assertThat(fetch()).isEqualTo("set-1");
        nanos.incrementAndGet();
        assertThat(fetch()).isEqualTo("set-2");
    }

    @Test
    void unknownKeyIdsRefetchTheSetAtMostOncePerInterval() {
        fetch();
        // The JWK source calls invalidate() for every token whose key id the set lacks.
        assertThat(cache.invalidate()).as("the first unknown key id refetches: the issuer may have rotated").isTrue();
        fetch();
        for (int i = 0; i < 100; i++) {
            assertThat(cache.invalidate()).isFalse();
            fetch();
        }
        assertThat(fetches).hasValue(2);

        nanos.addAndGet(JwkSetCache.REFETCH_INTERVAL.toNanos());
        assertThat(cache.invalidate()).isTrue();
        fetch();
        assertThat(fetches).hasValue(3);
    }
}
