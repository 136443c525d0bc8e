package io.leasekeeper.security;

import io.leasekeeper.key.Text;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.regex.Pattern;
import org.springframework.security.oauth2.core.OAuth2Error;
import org.springframework.security.oauth2.core.OAuth2ErrorCodes;
import org.springframework.security.oauth2.core.OAuth2TokenValidator;
import org.springframework.security.oauth2.core.OAuth2TokenValidatorResult;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.jwt.JwtIssuerValidator;
import org.springframework.security.oauth2.jwt.JwtTypeValidator;
import org.springframework.security.oauth2.jwt.JwtValidators;

/**
 * What a signed token must say to be accepted, the same whichever way its signature is checked (public key,
 * JWK set, issuer discovery, or the {@code local} profile's key). Spring Security's defaults ({@code exp}/{@code nbf}
 * with 60 s of clock skew, certificate thumbprint), and:
 * <ul>
 * <li>a {@code typ} header, when present, of {@code JWT} or, as RFC 9068 names access tokens, {@code at+jwt}
 * (Spring's default refuses the latter);</li>
 * <li>an {@code exp}: Spring's timestamp validator passes a token without one, which would be valid for
 * ever (contract 1.1, "Tokens");</li>
 * <li>{@code iss} equal to the configured issuer, when one is configured;</li>
 * <li>an {@code aud} naming one of the configured audiences, when some are configured;</li>
 * <li>a tenant and a subject the service can use as names.</li>
 * </ul>
 * Every refusal's description says, for the caller, which rule the token broke; it becomes the 401 problem's
 * {@code detail} ({@link TokenRefusals}). It may name the token's times and this service's issuer and audiences,
 * never the token itself.
 */
final class TokenRules {

    private static final Pattern TENANT = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");

    private TokenRules() {
    }

    /**
     * @param issuer    the only accepted {@code iss}, or null for any
     * @param audiences the accepted audiences, or empty for any
     */
    static OAuth2TokenValidator<Jwt> validator(String issuer, List<String> audiences, String tenantClaim) {
        List<OAuth2TokenValidator<Jwt>> rules = new ArrayList<>();
        JwtTypeValidator type = new JwtTypeValidator("JWT", "at+jwt", "application/at+jwt");
        type.setAllowEmpty(true);
        rules.add(type);
        rules.add(TokenRules::expiryRequired);
        if (issuer != null) {
            rules.add(new JwtIssuerValidator(issuer));
        }
        if (!audiences.isEmpty()) {
            rules.add(audience(List.copyOf(audiences)));
        }
        rules.add(callerClaims(tenantClaim));
        OAuth2TokenValidator<Jwt> all = JwtValidators.createDefaultWithValidators(rules);
        return jwt -> {
            OAuth2TokenValidatorResult result = all.validate(jwt);
            return result.hasErrors() ? OAuth2TokenValidatorResult.failure(result.getErrors().stream()
                    .map(e -> reworded(e, jwt, issuer)).toList()) : result;
        };
    }

    /**
     * Spring's own validators (type, timestamps, issuer) describe a refusal for Spring's users ("Jwt expired at
     * ...", "The iss claim is not valid"); this says it to the caller, in the words of this service's other rules.
     * Their descriptions are the only thing that tells them apart, so the wording is pinned by SecurityTest.
     */
    private static OAuth2Error reworded(OAuth2Error error, Jwt jwt, String issuer) {
        String said = error.getDescription() == null ? "" : error.getDescription();
        String description;
        if (said.startsWith("Jwt expired at")) {
            description = "The token expired at " + jwt.getExpiresAt() + " (exp).";
        } else if (said.startsWith("Jwt used before")) {
            description = "The token is not valid before " + jwt.getNotBefore() + " (nbf).";
        } else if (said.startsWith("the given typ value")) {
            description = "The token's type (its typ header) is not one this service accepts: JWT, at+jwt or"
                    + " application/at+jwt, or none.";
        } else if (said.startsWith("The iss claim")) {
            description = "The token was not issued by " + issuer + ", the issuer this service trusts (iss).";
        } else {
            return error;
        }
        return new OAuth2Error(error.getErrorCode(), description, error.getUri());
    }

    static OAuth2TokenValidatorResult expiryRequired(Jwt jwt) {
        return jwt.getExpiresAt() == null ? invalid("The token has no expiry (exp).") : OAuth2TokenValidatorResult.success();
    }

    static OAuth2TokenValidator<Jwt> audience(List<String> audiences) {
        return jwt -> {
            List<String> aud = jwt.getAudience();
            return aud != null && !Collections.disjoint(aud, audiences) ? OAuth2TokenValidatorResult.success()
                    : invalid("The token is not meant for this service: its audience (aud) names none of "
                            + String.join(", ", audiences) + ".");
        };
    }

    /** No subject or tenant, no access (contract, "Security"). */
    static OAuth2TokenValidator<Jwt> callerClaims(String tenantClaim) {
        return jwt -> {
            Object tenant = jwt.getClaims().get(tenantClaim);
            if (!(tenant instanceof String t) || !TENANT.matcher(t).matches()) {
                return invalid("The token has no valid '" + tenantClaim + "' claim (the tenant: 1..63 characters of"
                        + " A-Z a-z 0-9 . _ -, starting with a letter or digit).");
            }
            String subject = jwt.getSubject();
            if (subject == null || subject.isBlank() || subject.length() > 255
                    || Text.hasControlOrUnpaired(subject)) {
                return invalid("The token has no valid subject (sub): 1..255 characters, not blank, no control"
                        + " characters.");
            }
            return OAuth2TokenValidatorResult.success();
        };
    }

    private static OAuth2TokenValidatorResult invalid(String description) {
        return OAuth2TokenValidatorResult.failure(new OAuth2Error(OAuth2ErrorCodes.INVALID_TOKEN, description, null));
    }
}
