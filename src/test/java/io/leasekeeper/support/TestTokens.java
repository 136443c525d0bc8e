package io.leasekeeper.support;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.Date;
import java.util.List;

/**
 * Signs test JWTs. The service trusts the public key through the standard
 * {@code spring.security.oauth2.resourceserver.jwt.public-key-location} property, as in production.
 */
public final class TestTokens {

    public static final List<String> READ = List.of("leases:read");
    public static final List<String> WRITE = List.of("leases:write");
    public static final List<String> ADMIN = List.of("leases:admin");

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
                String pem = "-----BEGIN PUBLIC KEY-----\n"
                        + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(TRUSTED.getPublic().getEncoded())
                        + "\n-----END PUBLIC KEY-----\n";
                Files.writeString(publicKeyFile, pem);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return publicKeyFile.toUri().toString();
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

    private static JWTClaimsSet.Builder claims(String subject, List<String> scopes) {
        Date now = new Date();
        return new JWTClaimsSet.Builder()
                .subject(subject)
                .issuer("leasekeeper-tests")
                .issueTime(now)
                .expirationTime(new Date(now.getTime() + 3_600_000))
                .claim("scope", String.join(" ", scopes));
    }

    private static String sign(KeyPair key, JWTClaimsSet claims) {
        try {
            SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.RS256).type(JOSEObjectType.JWT).build(),
                    claims);
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
