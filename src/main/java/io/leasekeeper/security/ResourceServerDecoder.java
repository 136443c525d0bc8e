package io.leasekeeper.security;

import io.leasekeeper.config.LeasekeeperProperties;
import java.security.KeyFactory;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.springframework.boot.security.oauth2.server.resource.autoconfigure.OAuth2ResourceServerProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;
import org.springframework.security.oauth2.core.OAuth2TokenValidator;
import org.springframework.security.oauth2.jose.jws.SignatureAlgorithm;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.jwt.JwtDecoder;
import org.springframework.security.oauth2.jwt.NimbusJwtDecoder;
import org.springframework.util.StringUtils;

/**
 * The service's JWT decoder, from Spring Boot's standard resource-server properties, in place of the one
 * Boot would build (Boot backs off when this bean exists, and its {@code audiences} property then applies
 * only because this class reads it). Boot's decoders checked {@code iss} only with {@code issuer-uri}, let a
 * token without {@code exp} through, fetched the JWK set again for every token with an unknown key id, and
 * forgot the set when a fetch failed; here every configuration applies {@link TokenRules} and takes its keys
 * from {@link IssuerKeys}.
 * <p>
 * The key comes from {@code jwk-set-uri}, else {@code public-key-location}, else {@code issuer-uri} (OpenID
 * discovery, on the first token, so that the service starts while the issuer is away). {@code issuer-uri},
 * when set, is the only accepted {@code iss} in all three; beside a key source it is only compared, never
 * fetched. {@code jws-algorithms} (default RS256) are the only accepted algorithms, so a token signed with
 * HMAC keyed by the public key (algorithm confusion) finds no key. The {@code local} profile has its own
 * decoder ({@link LocalTokens}), with the same rules.
 */
@Configuration(proxyBeanMethods = false)
@Profile("!local")
class ResourceServerDecoder {

    private static final String PREFIX = "spring.security.oauth2.resourceserver.jwt.";

    @Bean
    JwtDecoder jwtDecoder(OAuth2ResourceServerProperties resourceServer, LeasekeeperProperties properties)
            throws Exception {
        OAuth2ResourceServerProperties.Jwt jwt = resourceServer.getJwt();
        String issuer = StringUtils.hasText(jwt.getIssuerUri()) ? jwt.getIssuerUri() : null;
        boolean publicKey = jwt.getPublicKeyLocation() != null;
        if (!StringUtils.hasText(jwt.getJwkSetUri()) && !publicKey && issuer == null) {
            throw new IllegalStateException("No JWT decoder is configured: set one of " + PREFIX + "issuer-uri,"
                    + " jwk-set-uri or public-key-location (or, for development only, run with the 'local' profile)");
        }
        Set<SignatureAlgorithm> algorithms = algorithms(jwt.getJwsAlgorithms());
        OAuth2TokenValidator<Jwt> rules = TokenRules.validator(issuer,
                Audiences.accepted(jwt.getAudiences(), properties.security().audienceCheck()),
                properties.security().tenantClaim());
        if (StringUtils.hasText(jwt.getJwkSetUri())) {
            return withRules(NimbusJwtDecoder.withJwkSource(IssuerKeys.atJwkSetUri(jwt.getJwkSetUri()))
                    .jwsAlgorithms(a -> a.addAll(algorithms)).build(), rules);
        }
        if (publicKey) {
            if (algorithms.size() != 1) {
                throw new IllegalStateException("With " + PREFIX + "public-key-location, " + PREFIX
                        + "jws-algorithms must name exactly one algorithm, not " + algorithms);
            }
            return withRules(NimbusJwtDecoder.withPublicKey(rsaPublicKey(jwt.readPublicKey()))
                    .signatureAlgorithm(algorithms.iterator().next()).build(), rules);
        }
        return withRules(NimbusJwtDecoder.withJwkSource(IssuerKeys.ofIssuer(issuer))
                .jwsAlgorithms(a -> a.addAll(algorithms)).build(), rules);
    }

    private static NimbusJwtDecoder withRules(NimbusJwtDecoder decoder, OAuth2TokenValidator<Jwt> rules) {
        decoder.setJwtValidator(rules);
        return decoder;
    }

    private static Set<SignatureAlgorithm> algorithms(List<String> names) {
        Set<SignatureAlgorithm> algorithms = new LinkedHashSet<>();
        for (String name : names) {
            SignatureAlgorithm algorithm = SignatureAlgorithm.from(name);
            if (algorithm == null) {
                throw new IllegalStateException(PREFIX + "jws-algorithms names '" + name
                        + "', which is not an asymmetric JWS algorithm (RS256, ES256, PS256, ...)");
            }
            algorithms.add(algorithm);
        }
        if (algorithms.isEmpty()) {
            throw new IllegalStateException(PREFIX + "jws-algorithms must name at least one algorithm");
        }
        return algorithms;
    }

    private static RSAPublicKey rsaPublicKey(String pem) throws Exception {
        String base64 = pem.replace("-----BEGIN PUBLIC KEY-----", "").replace("-----END PUBLIC KEY-----", "");
        return (RSAPublicKey) KeyFactory.getInstance("RSA")
                .generatePublic(new X509EncodedKeySpec(Base64.getMimeDecoder().decode(base64)));
    }
}
