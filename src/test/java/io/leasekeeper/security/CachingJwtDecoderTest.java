package io.leasekeeper.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.benmanes.caffeine.cache.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.security.oauth2.core.OAuth2Error;
import org.springframework.security.oauth2.jwt.BadJwtException;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.jwt.JwtDecoder;
import org.springframework.security.oauth2.jwt.JwtValidationException;

/** The validated-token cache, with a clock the test moves (the cache's ticker follows it). */
class CachingJwtDecoderTest {

    private static final Instant START = Instant.parse("2026-12-05T04:00:00Z");

    private final AtomicInteger decodes = new AtomicInteger();
    private final TestClock clock = new TestClock();

    /** Decodes every token as one expiring at {@code expiresAt}, and refuses it from then on, as a real decoder. */
    private JwtDecoder decoding(Instant expiresAt) {
        return token -> {
            decodes.incrementAndGet();
            if (expiresAt != null && !clock.instant().isBefore(expiresAt)) {
                throw new JwtValidationException("expired", java.util.List.of(new OAuth2Error("invalid_token")));
            }
            return Jwt.withTokenValue(token).header("alg", "RS256").subject("alice")
                    .issuedAt(START.minusSeconds(60)).expiresAt(expiresAt).build();
        };
    }

    private CachingJwtDecoder cache(JwtDecoder decoder, int maximumSize) {
        return new CachingJwtDecoder(decoder, maximumSize, clock, clock);
    }

    @Test
    void aValidTokenIsCheckedOnceAndThenAnsweredFromMemory() {
        CachingJwtDecoder cache = cache(decoding(START.plusSeconds(3600)), 10);
        Jwt first = cache.decode("token-a");
        Jwt second = cache.decode("token-a");
        assertThat(second).isSameAs(first);
        assertThat(decodes).hasValue(1);
        cache.decode("token-b");
        assertThat(decodes).hasValue(2);
    }

    @Test
    void aTokenCachedWhileValidIsNeverAnsweredFromMemoryOnceExpired() {
        CachingJwtDecoder cache = cache(decoding(START.plusSeconds(2)), 10);
        cache.decode("token");
        clock.advance(Duration.ofMillis(1999));
        cache.decode("token");
        assertThat(decodes).as("answered from memory while valid").hasValue(1);

        clock.advance(Duration.ofMillis(1));
        assertThatThrownBy(() -> cache.decode("token")).isInstanceOf(JwtValidationException.class);
        assertThat(decodes).as("at its exp the real decoder decides again").hasValue(2);
        // Caffeine drops expired entries by a timer wheel whose buckets span about a second.
        clock.advance(Duration.ofMinutes(1));
        assertThat(cache.size()).as("and the cache forgets it").isZero();
    }

    @Test
    void aRememberedTokenIsCheckedAgainAfterAMinuteSoThatAWithdrawnKeyStopsBeingAccepted() {
        AtomicBoolean withdrawn = new AtomicBoolean();
        JwtDecoder decoder = decoding(START.plusSeconds(3600));
        CachingJwtDecoder cache = cache(token -> {
            if (withdrawn.get()) {
                decodes.incrementAndGet();
                throw new BadJwtException("no key matches");
            }
            return decoder.decode(token);
        }, 10);
        cache.decode("token");
        withdrawn.set(true);
        clock.advance(CachingJwtDecoder.REMEMBER_AT_MOST.minusMillis(1));
        cache.decode("token");
        assertThat(decodes).as("remembered for a minute at most").hasValue(1);

        clock.advance(Duration.ofMillis(1));
        assertThatThrownBy(() -> cache.decode("token")).isInstanceOf(BadJwtException.class);
        assertThat(decodes).as("then the decoder, with the keys it has now, decides again").hasValue(2);
    }

    @Test
    void aTokenWithoutExpiryIsNeverRemembered() {
        CachingJwtDecoder cache = cache(decoding(null), 10);
        cache.decode("token");
        cache.decode("token");
        assertThat(decodes).hasValue(2);
        assertThat(cache.size()).isZero();
    }

    @Test
    void aTokenThatFailsIsNeverRemembered() {
        JwtDecoder refusing = token -> {
            decodes.incrementAndGet();
            throw new BadJwtException("bad signature");
        };
        CachingJwtDecoder cache = cache(refusing, 10);
        assertThatThrownBy(() -> cache.decode("forged")).isInstanceOf(BadJwtException.class);
        assertThatThrownBy(() -> cache.decode("forged")).isInstanceOf(BadJwtException.class);
        assertThat(decodes).hasValue(2);
    }

    @Test
    void theCacheHoldsAtMostItsMaximumSize() {
        CachingJwtDecoder cache = cache(decoding(START.plusSeconds(3600)), 10);
        for (int i = 0; i < 1000; i++) {
            cache.decode("token-" + i);
        }
        assertThat(cache.size()).isLessThanOrEqualTo(10);
    }

    /** A clock and a Caffeine ticker that stand still until the test moves them. */
    private static final class TestClock extends Clock implements Ticker {
        private volatile long nanos;

        void advance(Duration duration) {
            nanos += duration.toNanos();
        }

        @Override
        public Instant instant() {
            return START.plusNanos(nanos);
        }

        @Override
        public long read() {
            return nanos;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException();
        }
    }
}
