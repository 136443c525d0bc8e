package io.leasekeeper.client.autoconfigure;

import io.leasekeeper.client.BaseUrl;
import io.leasekeeper.client.HoldOptions;
import java.net.URI;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code leasekeeper.client.*}: where the service is, who this instance is to it, how its held leases are kept
 * and how hard each call tries. Checked when bound, so a wrong setting stops the application at start-up with
 * the property's name, not at its first lease.
 *
 * <p>Applications name their leases' holder with {@link #holder()}:
 * {@code AcquireRequest.of(key, properties.holder(), ttl)}.
 *
 * <p>{@link #toString()} shows every setting but the token.
 *
 * @param baseUrl        the service, for example {@code https://leasekeeper.internal}, or
 *                       {@code https://gateway.internal/leasekeeper} behind a gateway that routes by path (requests
 *                       go under its path); https unless its host is loopback or {@code allowPlainHttp} is set
 * @param allowPlainHttp an {@code http} base URL whose host is not loopback is allowed (default false: start-up
 *                       stops, since the token would cross the network in clear)
 * @param holder         who holds the leases this application takes (1 to 128 characters); default this host's
 *                       name, as the JDK resolves it, else the {@code HOSTNAME} environment variable
 * @param renewFraction  a held lease is renewed every this fraction of its TTL, between 0 and 1 (default a third)
 * @param margin         a held lease's local deadline is kept this far short of the service's expiry (default 1 s)
 * @param watch          held leases watch themselves, so that a revoke is known within a second (default true)
 * @param connectTimeout the longest wait for a connection (default 5 s)
 * @param requestTimeout the longest wait for one answer, beyond a waiting acquire's or a watch's own wait
 *                       (default 10 s)
 * @param retries        how a 503, a 429 TENANT_BUSY or a failed connection is retried
 * @param token          a static bearer token; for a token that expires, use {@code oauth2.registration-id}
 * @param oauth2         client credentials through Spring Security's OAuth2 client
 */
@ConfigurationProperties("leasekeeper.client")
public record LeasekeeperClientProperties(
        @DefaultValue("http://localhost:8080") URI baseUrl,
        boolean allowPlainHttp,
        String holder,
        @DefaultValue("0.3333333333333333") double renewFraction,
        @DefaultValue("1s") Duration margin,
        @DefaultValue("true") boolean watch,
        @DefaultValue("5s") Duration connectTimeout,
        @DefaultValue("10s") Duration requestTimeout,
        @DefaultValue Retries retries,
        String token,
        @DefaultValue OAuth2 oauth2) {

    /** The contract's limit on a holder's length. */
    static final int HOLDER_MAX_LENGTH = 128;

    public LeasekeeperClientProperties {
        if (baseUrl == null) {
            throw invalid("base-url", "must be an absolute http or https URL", null);
        }
        try {
            BaseUrl.checked(baseUrl, allowPlainHttp, "leasekeeper.client.allow-plain-http=true");
        } catch (IllegalArgumentException broken) {
            throw invalid("base-url", broken.getMessage(), baseUrl);
        }
        holder = holder == null ? DefaultHolder.resolve() : holder.strip();
        if (holder.isEmpty() || holder.length() > HOLDER_MAX_LENGTH) {
            throw invalid("holder", "must be 1 to " + HOLDER_MAX_LENGTH + " characters", holder);
        }
        // HoldOptions says the same, but without the property's name.
        if (!(renewFraction > 0 && renewFraction < 1)) {
            throw invalid("renew-fraction", "must be between 0 and 1, both excluded (a third renews three times"
                    + " per TTL)", renewFraction);
        }
        if (margin == null || margin.isNegative()) {
            throw invalid("margin", "must not be negative", margin);
        }
        if (connectTimeout == null || connectTimeout.isNegative() || connectTimeout.isZero()) {
            throw invalid("connect-timeout", "must be positive", connectTimeout);
        }
        if (requestTimeout == null || requestTimeout.isNegative() || requestTimeout.isZero()) {
            throw invalid("request-timeout", "must be positive", requestTimeout);
        }
        token = token == null || token.isBlank() ? null : token.strip(); // an empty variable means none
        if (token != null && oauth2.registrationId() != null) {
            throw new IllegalArgumentException("leasekeeper.client.token and leasekeeper.client.oauth2.registration-id"
                    + " are both set: set one of them, the one the service's tokens come from");
        }
    }

    /** Every setting, the token shown only as set or not: this string goes to logs and failure reports. */
    @Override
    public String toString() {
        return "LeasekeeperClientProperties[baseUrl=" + baseUrl + ", allowPlainHttp=" + allowPlainHttp + ", holder="
                + holder + ", renewFraction=" + renewFraction + ", margin=" + margin + ", watch=" + watch
                + ", connectTimeout=" + connectTimeout + ", requestTimeout=" + requestTimeout + ", retries=" + retries
                + ", token=" + (token == null ? "none" : "(hidden)") + ", oauth2=" + oauth2 + "]";
    }

    /** How the application's held leases are kept, from {@code renew-fraction}, {@code margin} and {@code watch}. */
    public HoldOptions holdOptions() {
        return new HoldOptions(renewFraction, margin, watch);
    }

    /**
     * Retries of a 503, a 429 TENANT_BUSY or a failed connection, with full jitter.
     *
     * @param maxAttempts  attempts per call, the first included (default 4)
     * @param firstBackoff the first pause's upper bound, doubled each retry (default 100 ms)
     * @param maxBackoff   the largest pause (default 2 s)
     */
    public record Retries(@DefaultValue("4") int maxAttempts, @DefaultValue("100ms") Duration firstBackoff,
                          @DefaultValue("2s") Duration maxBackoff) {

        public Retries {
            if (maxAttempts < 1) {
                throw invalid("retries.max-attempts", "must be at least 1 (the first attempt)", maxAttempts);
            }
            if (firstBackoff == null || firstBackoff.isNegative()) {
                throw invalid("retries.first-backoff", "must not be negative", firstBackoff);
            }
            if (maxBackoff == null || maxBackoff.compareTo(firstBackoff) < 0) {
                throw invalid("retries.max-backoff", "must be at least retries.first-backoff (" + firstBackoff + ")",
                        maxBackoff);
            }
        }
    }

    /**
     * @param registrationId the {@code spring.security.oauth2.client.registration.<id>} whose client credentials
     *                       buy the service's tokens; unset: no OAuth2
     */
    public record OAuth2(String registrationId) {

        public OAuth2 {
            registrationId = registrationId == null || registrationId.isBlank() ? null : registrationId.strip();
        }
    }

    private static IllegalArgumentException invalid(String property, String rule, Object value) {
        return new IllegalArgumentException("leasekeeper.client." + property + " " + rule + ", was " + value);
    }
}
