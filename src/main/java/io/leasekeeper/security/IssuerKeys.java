package io.leasekeeper.security;

import com.nimbusds.jose.KeySourceException;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSelector;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jose.util.JSONObjectUtils;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The issuer's signing keys, for the JWT decoder: the last JWK set fetched well, and the rules for fetching
 * another. Anyone can send a token, so nothing a token says may make the service fetch more often than these
 * rules allow, or forget keys it has:
 * <ul>
 * <li>the set is fetched when first needed, and again once it is {@link #MAX_AGE} old, so that a key the
 * issuer withdrew stops being trusted;</li>
 * <li>a token naming a key the set lacks (the issuer may have rotated its keys) fetches it again, at most once
 * per {@link #REFETCH_INTERVAL}; the set in hand stays until another has been fetched;</li>
 * <li>after a failed fetch, nothing is fetched for {@link #RETRY_AFTER}, and the last good set is used however
 * old it is (stale-if-error); only when there has never been one does decoding fail, with
 * {@link KeysUnavailable}, which the service answers with 503 and that {@code Retry-After} (a valid token
 * cannot be told from a forged one without keys, so neither 401 nor 500 would be true);</li>
 * <li>one fetch runs at a time, and a request that has a set in hand never waits for it; only requests that
 * arrive while there has never been a set wait for the first fetch;</li>
 * <li>a failed fetch is logged on one line without a stack trace, at most once per {@link #LOG_INTERVAL}
 * (with the number of failures since the last line), and the first good fetch after failures says so.</li>
 * </ul>
 * It reads time only from {@code nanoTime}, so its rules can be tested on a clock the test moves.
 */
final class IssuerKeys implements JWKSource<SecurityContext> {

    static final Duration MAX_AGE = Duration.ofMinutes(5);
    static final Duration REFETCH_INTERVAL = Duration.ofSeconds(5);
    static final Duration RETRY_AFTER = Duration.ofSeconds(5);
    static final Duration LOG_INTERVAL = Duration.ofMinutes(1);

    /** How long one fetch may take, connecting included; a request waits for it only while there is no set. */
    static final Duration FETCH_TIMEOUT = Duration.ofSeconds(5);
    private static final int MAX_DOCUMENT_BYTES = 1 << 20;
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1).connectTimeout(FETCH_TIMEOUT).build();
    private static final Logger log = LoggerFactory.getLogger(IssuerKeys.class);

    /** Fetches the issuer's JWK set; any exception is a failed fetch. */
    @FunctionalInterface
    interface Fetcher {
        JWKSet fetch() throws Exception;
    }

    /** There are no keys to check a token with: none has ever been fetched, and the issuer cannot be reached. */
    static final class KeysUnavailable extends KeySourceException {

        private final Duration retryAfter;

        KeysUnavailable(Duration retryAfter) {
            super("The issuer's token keys cannot be fetched");
            this.retryAfter = retryAfter;
        }

        /** How long until the next fetch may be tried, at least a second. */
        Duration retryAfter() {
            return retryAfter;
        }

        /** This exception, if it is among {@code e}'s causes (the decoder and Spring Security wrap it). */
        static KeysUnavailable in(Throwable e) {
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof KeysUnavailable unavailable) {
                    return unavailable;
                }
            }
            return null;
        }
    }

    private record Fetched(JWKSet set, long at) {
    }

    private final String source;
    private final Fetcher fetcher;
    private final LongSupplier nanoTime;
    private final ReentrantLock fetching = new ReentrantLock();

    private volatile Fetched last;
    // Guarded by fetching.
    private long lastAttempt;
    private boolean attemptedYet;
    private boolean failing;
    private long failuresUnlogged;
    private long lastLogged;
    private boolean loggedYet;

    /** The keys of the JWK set at {@code jwkSetUri}. */
    static IssuerKeys atJwkSetUri(String jwkSetUri) {
        URI uri = URI.create(jwkSetUri);
        return new IssuerKeys(jwkSetUri, () -> JWKSet.parse(download(uri)));
    }

    /**
     * The keys of the JWK set that {@code issuer}'s OpenID discovery document names ({@code jwks_uri}), found at
     * the first fetch, so that the service starts while the issuer is away; the document must name the same
     * issuer.
     */
    static IssuerKeys ofIssuer(String issuer) {
        URI discovery = URI.create(issuer.replaceAll("/+$", "") + "/.well-known/openid-configuration");
        AtomicReference<URI> jwkSetUri = new AtomicReference<>();
        return new IssuerKeys(discovery.toString(), () -> {
            if (jwkSetUri.get() == null) {
                Map<String, Object> document = JSONObjectUtils.parse(download(discovery));
                if (!issuer.equals(JSONObjectUtils.getString(document, "issuer"))) {
                    throw new IllegalStateException("its discovery document names another issuer: "
                            + JSONObjectUtils.getString(document, "issuer"));
                }
                URI named = JSONObjectUtils.getURI(document, "jwks_uri");
                if (named == null) {
                    throw new IllegalStateException("its discovery document names no jwks_uri");
                }
                jwkSetUri.set(named);
            }
            return JWKSet.parse(download(jwkSetUri.get()));
        });
    }

    /** @param source names the issuer's keys in log lines (a URL) */
    IssuerKeys(String source, Fetcher fetcher) {
        this(source, fetcher, System::nanoTime);
    }

    /** @param nanoTime a monotonic clock in nanoseconds, as {@link System#nanoTime()} */
    IssuerKeys(String source, Fetcher fetcher, LongSupplier nanoTime) {
        this.source = source;
        this.fetcher = fetcher;
        this.nanoTime = nanoTime;
    }

    @Override
    public List<JWK> get(JWKSelector selector, SecurityContext context) throws KeySourceException {
        Fetched held = last;
        if (held == null || nanoTime.getAsLong() - held.at() >= MAX_AGE.toNanos()) {
            held = refresh(held, Duration.ZERO);
        }
        List<JWK> keys = selector.select(held.set());
        if (keys.isEmpty()) {
            Fetched again = refresh(held, REFETCH_INTERVAL);
            if (again != held) {
                keys = selector.select(again.set());
            }
        }
        return keys;
    }

    /**
     * A newer set than {@code held}, if one may be fetched now: no fetch was attempted for {@code sinceAttempt}
     * (nor, after a failure, for {@link #RETRY_AFTER}). Otherwise {@code held}, or the set another request
     * fetched meanwhile. A request with a set in hand does not wait while another fetches.
     *
     * @throws KeysUnavailable when there is no set at all
     */
    private Fetched refresh(Fetched held, Duration sinceAttempt) throws KeysUnavailable {
        if (held != null) {
            if (!fetching.tryLock()) {
                return last;
            }
        } else {
            fetching.lock();
        }
        try {
            Fetched current = last;
            if (current != held) {
                return current;
            }
            long now = nanoTime.getAsLong();
            long wait = Math.max(failing ? RETRY_AFTER.toNanos() : 0, sinceAttempt.toNanos());
            if (attemptedYet && now - lastAttempt < wait) {
                return orUnavailable(held, wait - (now - lastAttempt));
            }
            attemptedYet = true;
            lastAttempt = now;
            try {
                JWKSet set = fetcher.fetch();
                last = new Fetched(set, now);
                recovered();
                return last;
            } catch (Exception e) {
                failed(e, held, now);
                return orUnavailable(held, RETRY_AFTER.toNanos());
            }
        } finally {
            fetching.unlock();
        }
    }

    private static Fetched orUnavailable(Fetched held, long retryAfterNanos) throws KeysUnavailable {
        if (held != null) {
            return held;
        }
        throw new KeysUnavailable(Duration.ofSeconds(Math.max(1, (retryAfterNanos + 999_999_999L) / 1_000_000_000L)));
    }

    private void failed(Exception e, Fetched held, long now) {
        failing = true;
        failuresUnlogged++;
        if (loggedYet && now - lastLogged < LOG_INTERVAL.toNanos()) {
            return;
        }
        String using = held == null ? "no token can be checked until it is (503 TOKEN_KEYS_UNAVAILABLE)"
                : "still using the set fetched " + Duration.ofNanos(now - held.at()).toSeconds() + " s ago";
        log.warn("The issuer's token keys could not be fetched from {} ({} failure{} since the last line): {}; {}",
                source, failuresUnlogged, failuresUnlogged == 1 ? "" : "s", describe(e), using);
        failuresUnlogged = 0;
        loggedYet = true;
        lastLogged = now;
    }

    private void recovered() {
        if (failing) {
            log.info("The issuer's token keys were fetched from {} again", source);
        }
        failing = false;
        failuresUnlogged = 0;
        loggedYet = false;
    }

    private static String download(URI uri) throws IOException, InterruptedException {
        HttpResponse<InputStream> response = HTTP.send(HttpRequest.newBuilder(uri).timeout(FETCH_TIMEOUT)
                .header("Accept", "application/json").GET().build(), HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream body = response.body()) {
            if (response.statusCode() != 200) {
                throw new IOException("HTTP " + response.statusCode());
            }
            byte[] bytes = body.readNBytes(MAX_DOCUMENT_BYTES + 1);
            if (bytes.length > MAX_DOCUMENT_BYTES) {
                throw new IOException("the document is larger than " + MAX_DOCUMENT_BYTES + " bytes");
            }
            return new String(bytes, StandardCharsets.UTF_8);
        }
    }

    private static String describe(Exception e) {
        String message = e.getMessage();
        return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }
}
