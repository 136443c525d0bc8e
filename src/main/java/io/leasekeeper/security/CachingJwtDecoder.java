package io.leasekeeper.security;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.jwt.JwtDecoder;
import org.springframework.security.oauth2.jwt.JwtException;

/**
 * Remembers tokens that decoded and validated, so that a client sending the same token on every call
 * pays for its signature check once a {@link #REMEMBER_AT_MOST} (an RSA verification was a sixth of a request's
 * CPU). What a decoded token says cannot change; what can is its time, and the keys trusted to sign it: an
 * issuer may withdraw a key ({@link IssuerKeys} sees it within its {@code MAX_AGE}), and its tokens must then
 * stop being accepted.
 * <p>
 * Invariants: the cache holds at most {@code maximumSize} tokens (the least useful go first, not all at
 * once); it answers for a token only before the token's {@code exp} by {@code clock}, and forgets it then, or
 * {@link #REMEMBER_AT_MOST} after its check if that is sooner, so a reuse after that goes to the real decoder,
 * whose rules (clock skew and current keys included) decide again; a token without {@code exp}, or one that
 * failed, is never remembered.
 */
final class CachingJwtDecoder implements JwtDecoder {

    static final Duration REMEMBER_AT_MOST = Duration.ofMinutes(1);

    private final JwtDecoder decoder;
    private final Clock clock;
    private final Cache<String, Jwt> decoded;

    CachingJwtDecoder(JwtDecoder decoder, int maximumSize) {
        this(decoder, maximumSize, Clock.systemUTC(), Ticker.systemTicker());
    }

    /**
     * @param ticker the cache's own clock for dropping entries, and for {@link #REMEMBER_AT_MOST}; {@code clock}
     *               decides which tokens are unexpired
     */
    CachingJwtDecoder(JwtDecoder decoder, int maximumSize, Clock clock, Ticker ticker) {
        this.decoder = decoder;
        this.clock = clock;
        this.decoded = Caffeine.newBuilder()
                .maximumSize(maximumSize)
                .expireAfter(Expiry.creating((String token, Jwt jwt) -> untilExpiry(jwt)))
                .ticker(ticker)
                .build();
    }

    @Override
    public Jwt decode(String token) throws JwtException {
        Jwt remembered = decoded.getIfPresent(token);
        if (remembered != null && unexpired(remembered)) {
            return remembered;
        }
        Jwt jwt = decoder.decode(token);
        if (unexpired(jwt)) {
            decoded.put(token, jwt);
        } else {
            decoded.invalidate(token);
        }
        return jwt;
    }

    /** The number of tokens held, once pending evictions are done (for tests). */
    long size() {
        decoded.cleanUp();
        return decoded.estimatedSize();
    }

    private boolean unexpired(Jwt jwt) {
        return jwt.getExpiresAt() != null && clock.instant().isBefore(jwt.getExpiresAt());
    }

    private Duration untilExpiry(Jwt jwt) {
        Instant expiresAt = jwt.getExpiresAt();
        Duration left = expiresAt == null ? Duration.ZERO : Duration.between(clock.instant(), expiresAt);
        return left.isNegative() ? Duration.ZERO : left.compareTo(REMEMBER_AT_MOST) > 0 ? REMEMBER_AT_MOST : left;
    }
}
