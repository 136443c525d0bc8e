package io.leasekeeper.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.security.oauth2.jwt.BadJwtException;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.jwt.JwtDecoder;
import org.springframework.security.oauth2.jwt.JwtValidationException;

class CachingJwtDecoderTest {

    private final AtomicInteger decodes = new AtomicInteger();

    private JwtDecoder decoding(Instant expiresAt) {
        return token -> {
            decodes.incrementAndGet();
            return Jwt.withTokenValue(token).header("alg", "RS256").subject("alice")
                    .issuedAt(expiresAt.minusSeconds(3600)).expiresAt(expiresAt).build();
        };
    }

    @Test
    void aValidTokenIsCheckedOnceAndThenAnsweredFromMemory() {
        CachingJwtDecoder cache = new CachingJwtDecoder(decoding(Instant.now().plusSeconds(3600)), 10);
        Jwt first = cache.decode("token-a");
        Jwt second = cache.decode("token-a");
        assertThat(second).isSameAs(first);
        assertThat(decodes).hasValue(1);
        cache.decode("token-b");
        assertThat(decodes).hasValue(2);
    }

    @Test
    void aRememberedTokenPastItsExpiryIsRefusedOnReuse() {
        // The delegate accepts it (as a real decoder did while it was valid); on reuse, time is checked again.
        CachingJwtDecoder cache = new CachingJwtDecoder(decoding(Instant.now().minusSeconds(120)), 10);
        cache.decode("token");
        assertThatThrownBy(() -> cache.decode("token")).isInstanceOf(JwtValidationException.class);
        assertThat(decodes).hasValue(1);
        // Forgotten once refused: the next use goes to the real decoder again.
        cache.decode("token");
        assertThat(decodes).hasValue(2);
    }

    @Test
    void aTokenThatFailsIsNeverRemembered() {
        JwtDecoder refusing = token -> {
            decodes.incrementAndGet();
            throw new BadJwtException("bad signature");
        };
        CachingJwtDecoder cache = new CachingJwtDecoder(refusing, 10);
        assertThatThrownBy(() -> cache.decode("forged")).isInstanceOf(BadJwtException.class);
        assertThatThrownBy(() -> cache.decode("forged")).isInstanceOf(BadJwtException.class);
        assertThat(decodes).hasValue(2);
    }

    @Test
    void theCacheHoldsAtMostItsCapacity() {
        CachingJwtDecoder cache = new CachingJwtDecoder(decoding(Instant.now().plusSeconds(3600)), 2);
        cache.decode("a");
        cache.decode("b");
        cache.decode("c"); // full: starts over with c
        cache.decode("c");
        cache.decode("a");
        assertThat(decodes).hasValue(4);
    }
}
