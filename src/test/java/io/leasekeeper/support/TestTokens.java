package io.leasekeeper.support;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.security.interfaces.RSAPublicKey;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * Signs test JWTs. The service trusts the public key through the standard
 * {@code spring.security.oauth2.resourceserver.jwt.public-key-location} property, as in production, or as the
 * JWK set {@link #jwkSet()} serves. Every token names {@link #ISSUER} and {@link #AUDIENCE}, which
 * {@code IntegrationTest} requires.
 */
public final class TestTokens {

    public static final List<String> READ = List.of("leases:read");
    public static final List<String> WRITE = List.of("leases:write");
    public static final List<String> ADMIN = List.of("leases:admin");
    public static final String ISSUER = "https://tokens.leasekeeper.test";
    public static final String AUDIENCE = "leasekeeper-tests";
    /** The key id of the trusted key in {@link #jwkSet()}. */
    public static final String KEY_ID = "test-key";

    private static final KeyPair TRUSTED = generate();
    private static final KeyPair UNTRUSTED = generate();
    private static Path publicKeyFile;

    private TestTokens() {
    }

    public static synchronized String publicKeyLocation() {
        if (publicKeyFile == null) {
            try {
                publicKeyFile = Files.createTempFile("leasekeeper-test-key", ".pub");
                publicKeyFile.toFile().deleteOnExit();
                Files.writeString(publicKeyFile, publicKeyPem());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return publicKeyFile.toUri().toString();
    }

    /** The trusted public key as the key file holds it (PEM). */
    public static String publicKeyPem() {
        return "-----BEGIN PUBLIC KEY-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(TRUSTED.getPublic().getEncoded())
                + "\n-----END PUBLIC KEY-----\n";
    }

    /** The trusted public key as a JWK set (JSON), with the key id {@link #KEY_ID}. */
    public static String jwkSet() {
        return new JWKSet(new RSAKey.Builder((RSAPublicKey) TRUSTED.getPublic()).keyID(KEY_ID).build()).toString();
    }

    public static String token(String subject, String tenant, List<String> scopes) {
        return sign(TRUSTED, claims(subject, scopes).claim("tenant", tenant).build());
    }

    public static String expired(String subject, String tenant, List<String> scopes) {
        Date past = new Date(System.currentTimeMillis() - 3_600_000);
        return sign(TRUSTED, claims(subject, scopes).claim("tenant", tenant).issueTime(past)
                .expirationTime(new Date(past.getTime() + 60_000)).build());
    }

    public static String signedByUnknownKey(String subject, String tenant, List<String> scopes) {
        return sign(UNTRUSTED, claims(subject, scopes).claim("tenant", tenant).build());
    }

    public static String withoutTenant(String subject, List<String> scopes) {
        return sign(TRUSTED, claims(subject, scopes).build());
    }

    /** A valid token but for what {@code edit} changes in its claims. */
    public static String with(String subject, String tenant, List<String> scopes,
                              UnaryOperator<JWTClaimsSet.Builder> edit) {
        return sign(TRUSTED, edit.apply(claims(subject, scopes).claim("tenant", tenant)).build());
    }

    /** As {@link #with}, and {@code keyId} in its header. */
    public static String withKeyId(String keyId, String subject, String tenant, List<String> scopes,
                                   UnaryOperator<JWTClaimsSet.Builder> edit) {
        return sign(TRUSTED, new JWSHeader.Builder(JWSAlgorithm.RS256).type(JOSEObjectType.JWT).keyID(keyId).build(),
                edit.apply(claims(subject, scopes).claim("tenant", tenant)).build());
    }

    /** A valid token whose header's {@code typ} is {@code type}. */
    public static String ofType(String type, String subject, String tenant, List<String> scopes) {
        return sign(TRUSTED, new JWSHeader.Builder(JWSAlgorithm.RS256).type(new JOSEObjectType(type)).build(),
                claims(subject, scopes).claim("tenant", tenant).build());
    }

    /**
     * Algorithm confusion: HS256, with the trusted public key's PEM text as the HMAC secret. A verifier that
     * takes the algorithm from the token would check it with the public key and accept it.
     */
    public static String hs256KeyedWithThePublicKey(String subject, String tenant, List<String> scopes) {
        try {
            SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.HS256).type(JOSEObjectType.JWT).build(),
                    claims(subject, scopes).claim("tenant", tenant).build());
            jwt.sign(new MACSigner(publicKeyPem().getBytes(StandardCharsets.US_ASCII)));
            return jwt.serialize();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static JWTClaimsSet.Builder claims(String subject, List<String> scopes) {
        Date now = new Date();
        return new JWTClaimsSet.Builder()
                .subject(subject)
                .issuer(ISSUER)
                .audience(AUDIENCE)
                .issueTime(now)
                .expirationTime(new Date(now.getTime() + 3_600_000))
                .claim("scope", String.join(" ", scopes));
    }

    private static String sign(KeyPair key, JWTClaimsSet claims) {
        return sign(key, new JWSHeader.Builder(JWSAlgorithm.RS256).type(JOSEObjectType.JWT).build(), claims);
    }

    private static String sign(KeyPair key, JWSHeader header, JWTClaimsSet claims) {
        try {
            SignedJWT jwt = new SignedJWT(header, claims);
            jwt.sign(new RSASSASigner(key.getPrivate()));
            return jwt.serialize();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static KeyPair generate() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
            generator.initialize(2048);
            return generator.generateKeyPair();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
