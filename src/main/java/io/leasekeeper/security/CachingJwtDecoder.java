package io.leasekeeper.security;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.security.oauth2.core.OAuth2TokenValidator;
import org.springframework.security.oauth2.core.OAuth2TokenValidatorResult;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.jwt.JwtDecoder;
import org.springframework.security.oauth2.jwt.JwtException;
import org.springframework.security.oauth2.jwt.JwtTimestampValidator;
import org.springframework.security.oauth2.jwt.JwtValidationException;

/**
 * Remembers tokens that decoded and validated, so that a client sending the same token on every call
 * pays for its signature check once (an RSA verification was a sixth of a request's CPU). What a
 * decoded token says cannot change, so only its time can make it invalid later: on every reuse the
 * timestamps are validated again, with Spring's own validator and clock skew. Tokens that fail are
 * never remembered. The cache holds at most {@code capacity} tokens and starts over when full.
 */
final class CachingJwtDecoder implements JwtDecoder {

    private final JwtDecoder decoder;
    private final int capacity;
    private final OAuth2TokenValidator<Jwt> timestamps = new JwtTimestampValidator();
    private final Map<String, Jwt> decoded = new ConcurrentHashMap<>();

    CachingJwtDecoder(JwtDecoder decoder, int capacity) {
        this.decoder = decoder;
        this.capacity = capacity;
    }

    @Override
    public Jwt decode(String token) throws JwtException {
        Jwt jwt = decoded.get(token);
        if (jwt == null) {
            jwt = decoder.decode(token);
            if (decoded.size() >= capacity) {
                decoded.clear();
            }
            decoded.put(token, jwt);
            return jwt;
        }
        OAuth2TokenValidatorResult result = timestamps.validate(jwt);
        if (result.hasErrors()) {
            decoded.remove(token);
            throw new JwtValidationException("The token has expired or is not yet valid.", result.getErrors());
        }
        return jwt;
    }
}
