package io.leasekeeper.security;

import com.nimbusds.jose.proc.BadJOSEException;
import java.text.ParseException;
import java.util.stream.Collectors;
import org.springframework.security.core.AuthenticationException;
import org.springframework.security.oauth2.core.OAuth2AuthenticationException;
import org.springframework.security.oauth2.core.OAuth2Error;
import org.springframework.security.oauth2.jwt.BadJwtException;
import org.springframework.security.oauth2.jwt.JwtValidationException;

/**
 * Why a request was not authenticated, as the 401 problem's {@code detail} says it: no bearer token, a malformed
 * one, a signature no trusted key verifies, or the rule of {@link TokenRules} it broke (expired, another issuer or
 * audience, no tenant or subject, another {@code typ}). The sentence is built from what failed, never from the
 * token: it never quotes the token or a part of it.
 */
final class TokenRefusals {

    static final String MISSING = "The request has no bearer token: send one as 'Authorization: Bearer <token>'.";
    static final String MALFORMED = "The bearer token is not a well-formed JWT (three base64url parts joined by dots,"
            + " the first two JSON).";
    static final String MALFORMED_HEADER = "The Authorization header is malformed: it must be 'Bearer', one space,"
            + " then the token (letters, digits and - . _ ~ + /).";
    static final String UNSIGNED = "The token is not signed; this service accepts only signed tokens.";
    static final String NOT_VERIFIED = "The token's signature does not verify with any key this service trusts"
            + " (a token of another issuer or key, an unknown key id, or an algorithm this service does not accept).";
    static final String INVALID = "The bearer token is not valid.";

    private TokenRefusals() {
    }

    static String detail(AuthenticationException e) {
        JwtValidationException invalid = cause(e, JwtValidationException.class);
        if (invalid != null) {
            // TokenRules' descriptions: each says which rule the token broke, none quotes it.
            String broken = invalid.getErrors().stream().map(OAuth2Error::getDescription)
                    .filter(d -> d != null && !d.isBlank()).distinct().collect(Collectors.joining(" "));
            return broken.isEmpty() ? INVALID : broken;
        }
        BadJwtException bad = cause(e, BadJwtException.class);
        if (bad != null) {
            if (cause(bad, ParseException.class) != null) {
                return MALFORMED;
            }
            if (cause(bad, BadJOSEException.class) != null) {
                return NOT_VERIFIED;
            }
            // NimbusJwtDecoder's refusal of a token whose algorithm is "none".
            return bad.getMessage() != null && bad.getMessage().startsWith("Unsupported algorithm") ? UNSIGNED : INVALID;
        }
        if (e instanceof OAuth2AuthenticationException oauth) {
            // The bearer token resolver's refusals of the header itself: malformed, or more than one token.
            String description = oauth.getError().getDescription();
            if (description == null || description.isBlank()) {
                return INVALID;
            }
            return description.contains("malformed") ? MALFORMED_HEADER : description + ".";
        }
        return MISSING;
    }

    private static <T extends Throwable> T cause(Throwable e, Class<T> type) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }
}
