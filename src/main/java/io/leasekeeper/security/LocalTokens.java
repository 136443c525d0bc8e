package io.leasekeeper.security;

import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.source.ImmutableJWKSet;
import io.leasekeeper.config.LeasekeeperProperties;
import io.leasekeeper.web.FieldErrors;
import java.math.BigDecimal;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.security.interfaces.RSAPrivateKey;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.security.oauth2.server.resource.autoconfigure.OAuth2ResourceServerProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.oauth2.jose.jws.SignatureAlgorithm;
import org.springframework.security.oauth2.jwt.JwsHeader;
import org.springframework.security.oauth2.jwt.JwtClaimsSet;
import org.springframework.security.oauth2.jwt.JwtDecoder;
import org.springframework.security.oauth2.jwt.JwtEncoderParameters;
import org.springframework.security.oauth2.jwt.NimbusJwtDecoder;
import org.springframework.security.oauth2.jwt.NimbusJwtEncoder;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * Development tokens, only with the {@code local} profile switched on explicitly, and only against a
 * database on this machine. The service makes a throwaway RSA key at start-up, trusts only that key, and
 * mints tokens with {@code POST /local/token}: they expire (an hour, or {@code ttlSeconds}, at most a day), name
 * the configured audiences, and pass the same {@link TokenRules} as production tokens.
 * Without the profile none of these beans exist: the endpoint is absent and tokens are checked by the
 * standard resource-server properties alone.
 */
@Configuration(proxyBeanMethods = false)
@Profile("local")
class LocalTokens {

    /** {@code ttlSeconds} is any JSON number, so that every one out of range is told the range. */
    record TokenRequest(String subject, String tenant, List<String> scopes, BigDecimal ttlSeconds) {
    }

    record TokenResponse(String accessToken, String tokenType, Instant expiresAt) {
    }

    record LocalAudiences(List<String> names) {
    }

    private static final String ISSUER = "leasekeeper-local";
    private static final Duration DEFAULT_LIFETIME = Duration.ofHours(1);
    /** The longest a development token lives: it names any tenant, with any scope. */
    private static final Duration MAX_LIFETIME = Duration.ofDays(1);

    private final RSAKey key;

    LocalTokens() throws NoSuchAlgorithmException {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        KeyPair pair = generator.generateKeyPair();
        this.key = new RSAKey.Builder((RSAPublicKey) pair.getPublic())
                .privateKey((RSAPrivateKey) pair.getPrivate())
                .keyID("local-" + UUID.randomUUID())
                .build();
    }

    /**
     * Refuses to start unless the settings keep the datasource on this machine ({@link LoopbackDatabase}). A bean
     * factory post-processor runs before any bean is made, so nothing has connected to that database yet.
     */
    @Bean
    static BeanFactoryPostProcessor localDatabaseOnly(Environment environment) {
        return beanFactory -> LoopbackDatabase.require(environment);
    }

    /** Then refuses to start unless the pool's first connection reached this machine ({@link LoopbackPool}). */
    @Bean
    static BeanPostProcessor localConnectionOnly() {
        return new LoopbackPool();
    }

    /**
     * The audiences local tokens name and the decoder requires: the configured ones (application-local.yml
     * sets one), under the same start-up rules as in production.
     */
    @Bean
    LocalAudiences localAudiences(OAuth2ResourceServerProperties resourceServer, LeasekeeperProperties properties) {
        return new LocalAudiences(Audiences.accepted(resourceServer.getJwt().getAudiences(),
                properties.security().audienceCheck()));
    }

    /** The production rules ({@link TokenRules}), with this profile's own issuer. */
    @Bean
    JwtDecoder localJwtDecoder(LeasekeeperProperties properties, LocalAudiences audiences) throws Exception {
        NimbusJwtDecoder decoder = NimbusJwtDecoder.withPublicKey(key.toRSAPublicKey()).build();
        decoder.setJwtValidator(TokenRules.validator(ISSUER, audiences.names(), properties.security().tenantClaim()));
        return decoder;
    }

    @Bean
    @Order(0)
    SecurityFilterChain localTokenEndpoint(HttpSecurity http) throws Exception {
        return http.securityMatcher("/local/**")
                .authorizeHttpRequests(r -> r.anyRequest().permitAll())
                .csrf(csrf -> csrf.disable())
                .build();
    }

    @Bean
    NimbusJwtEncoder localJwtEncoder() {
        return new NimbusJwtEncoder(new ImmutableJWKSet<>(new JWKSet(key)));
    }

    @RestController
    @Profile("local")
    static class LocalTokenController {
        private final NimbusJwtEncoder encoder;
        private final String tenantClaim;
        private final List<String> audiences;

        LocalTokenController(NimbusJwtEncoder encoder, LeasekeeperProperties properties, LocalAudiences audiences) {
            this.encoder = encoder;
            this.tenantClaim = properties.security().tenantClaim();
            this.audiences = audiences.names();
        }

        @PostMapping("/local/token")
        TokenResponse mint(@RequestBody TokenRequest request) {
            Duration lifetime = lifetime(request.ttlSeconds());
            Instant now = Instant.now(); // token lifetime only; lease time is always PostgreSQL's
            Instant expiresAt = now.plus(lifetime);
            List<String> scopes = request.scopes() == null
                    ? List.of("leases:read", "leases:write", "leases:admin") : request.scopes();
            JwtClaimsSet.Builder claims = JwtClaimsSet.builder()
                    .issuer(ISSUER)
                    .subject(request.subject() == null ? "local-user" : request.subject())
                    .issuedAt(now)
                    .expiresAt(expiresAt)
                    .claims(c -> c.putAll(Map.of(tenantClaim, request.tenant() == null ? "local" : request.tenant(),
                            "scope", String.join(" ", scopes))));
            if (!audiences.isEmpty()) {
                claims.audience(audiences);
            }
            String token = encoder.encode(JwtEncoderParameters.from(
                    JwsHeader.with(SignatureAlgorithm.RS256).build(), claims.build())).getTokenValue();
            return new TokenResponse(token, "Bearer", expiresAt);
        }

        /** {@code ttlSeconds}, an hour when absent; 400 VALIDATION_FAILED outside 1 second to a day. */
        private static Duration lifetime(BigDecimal ttlSeconds) {
            if (ttlSeconds == null) {
                return DEFAULT_LIFETIME;
            }
            FieldErrors errors = new FieldErrors();
            Long seconds = errors.wholeWithin("ttlSeconds", ttlSeconds, 1, MAX_LIFETIME.toSeconds());
            errors.throwIfAny();
            return Duration.ofSeconds(seconds);
        }
    }
}
