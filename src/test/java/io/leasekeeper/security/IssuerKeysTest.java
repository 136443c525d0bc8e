package io.leasekeeper.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKMatcher;
import com.nimbusds.jose.jwk.JWKSelector;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The issuer's keys and the rules for fetching them, on a clock the test moves and an issuer the test plays. */
class IssuerKeysTest {

    private static final RSAKey OLD = key("old");
    private static final RSAKey NEW = key("new");

    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final AtomicInteger fetches = new AtomicInteger();
    /** What the issuer serves: a set, or null while it fails. */
    private final AtomicReference<JWKSet> served = new AtomicReference<>(new JWKSet(OLD));
    private final IssuerKeys keys = new IssuerKeys("https://issuer.test/jwks", () -> {
        fetches.incrementAndGet();
        JWKSet set = served.get();
        if (set == null) {
            throw new IOException("HTTP 503");
        }
        return set;
    }, nanos::get);

    private final Logger logger = (Logger) LoggerFactory.getLogger(IssuerKeys.class);
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();

    @BeforeEach
    void captureLogs() {
        logged.start();
        logger.addAppender(logged);
    }

    @AfterEach
    void releaseLogs() {
        logger.detachAppender(logged);
    }

    @Test
    void theSetIsFetchedWhenFirstNeededAndAgainOnceItIsMaxAgeOld() throws Exception {
        assertThat(ids("old")).containsExactly("old");
        advance(IssuerKeys.MAX_AGE.minusNanos(1));
        served.set(new JWKSet(NEW));
        assertThat(ids("old")).containsExactly("old");
        assertThat(fetches).hasValue(1);

        advance(Duration.ofNanos(1));
        assertThat(ids("old")).as("the issuer withdrew it").isEmpty();
        assertThat(ids("new")).containsExactly("new");
        assertThat(fetches).hasValue(2);
    }

    @Test
    void unknownKeyIdsRefetchAtMostOncePerIntervalAndFindARotatedKey() throws Exception {
        ids("old");
        assertThat(ids("made-up")).as("a set fetched within the interval is as new as a refetch").isEmpty();
        assertThat(fetches).hasValue(1);
        advance(IssuerKeys.REFETCH_INTERVAL);
        for (int i = 0; i < 100; i++) {
            assertThat(ids("made-up-" + i)).isEmpty();
        }
        assertThat(fetches).as("the first unknown key id refetched, the others within the interval did not").hasValue(2);

        served.set(new JWKSet(List.of(OLD, NEW)));
        assertThat(ids("new")).as("within the interval of the last refetch").isEmpty();
        advance(IssuerKeys.REFETCH_INTERVAL);
        assertThat(ids("new")).as("a rotation is accepted within the interval").containsExactly("new");
        assertThat(ids("old")).containsExactly("old");
        assertThat(fetches).hasValue(3);
    }

    @Test
    void aFailedRefetchKeepsTheLastGoodSetHoweverOldAndWaitsBeforeTryingAgain() throws Exception {
        ids("old");
        served.set(null);
        advance(IssuerKeys.MAX_AGE.multipliedBy(3));
        assertThat(ids("old")).as("stale, but the best there is").containsExactly("old");
        assertThat(ids("made-up")).as("an unknown key id does not drop the set").isEmpty();
        assertThat(ids("old")).containsExactly("old");
        assertThat(fetches).as("nothing is fetched again within the wait after a failure").hasValue(2);

        advance(IssuerKeys.RETRY_AFTER);
        served.set(new JWKSet(NEW));
        assertThat(ids("new")).containsExactly("new");
        assertThat(ids("old")).isEmpty();
        assertThat(fetches).hasValue(3);
        assertThat(messages()).anySatisfy(m -> assertThat(m).startsWith("The issuer's token keys were fetched from"));
    }

    @Test
    void withoutEverASetEveryRequestIsTheSameRefusalWithRetryAfterAndOneFetchPerWait() throws Exception {
        served.set(null);
        for (int i = 0; i < 20; i++) {
            assertThatThrownBy(() -> ids("old")).isInstanceOfSatisfying(IssuerKeys.KeysUnavailable.class,
                    e -> assertThat(e.retryAfter()).isEqualTo(IssuerKeys.RETRY_AFTER));
        }
        assertThat(fetches).hasValue(1);

        advance(IssuerKeys.RETRY_AFTER.minusMillis(1_500));
        assertThatThrownBy(() -> ids("old")).isInstanceOfSatisfying(IssuerKeys.KeysUnavailable.class,
                e -> assertThat(e.retryAfter()).as("what is left, rounded up").isEqualTo(Duration.ofSeconds(2)));
        advance(Duration.ofMillis(1_500));
        served.set(new JWKSet(OLD));
        assertThat(ids("old")).containsExactly("old");
        assertThat(fetches).hasValue(2);
    }

    @Test
    void failuresAreLoggedOnOneLineWithoutAStackTraceAtMostOncePerInterval() {
        served.set(null);
        long rounds = IssuerKeys.LOG_INTERVAL.dividedBy(IssuerKeys.RETRY_AFTER);
        for (int i = 0; i < rounds; i++) {
            assertThatThrownBy(() -> ids("old")).isInstanceOf(IssuerKeys.KeysUnavailable.class);
            advance(IssuerKeys.RETRY_AFTER);
        }
        assertThatThrownBy(() -> ids("old")).isInstanceOf(IssuerKeys.KeysUnavailable.class);
        assertThat(fetches).hasValue((int) rounds + 1);
        assertThat(logged.list).hasSize(2).allSatisfy(event -> {
            assertThat(event.getLevel()).isEqualTo(Level.WARN);
            assertThat(event.getThrowableProxy()).isNull();
        });
        assertThat(messages().get(0)).contains("https://issuer.test/jwks", "(1 failure since the last line)",
                "IOException: HTTP 503", "503 TOKEN_KEYS_UNAVAILABLE");
        assertThat(messages().get(1)).contains("(" + rounds + " failures since the last line)");
    }

    @Test
    void aRequestWithASetInHandNeverWaitsForAnotherRequestsFetch() throws Exception {
        CountDownLatch fetching = new CountDownLatch(1);
        CountDownLatch answer = new CountDownLatch(1);
        AtomicInteger calls = new AtomicInteger();
        IssuerKeys hanging = new IssuerKeys("https://issuer.test/jwks", () -> {
            if (calls.incrementAndGet() > 1) {
                fetching.countDown();
                answer.await();
                throw new IOException("timed out");
            }
            return new JWKSet(OLD);
        }, nanos::get);
        hanging.get(selector("old"), null);
        advance(IssuerKeys.REFETCH_INTERVAL);

        CompletableFuture<List<JWK>> unknown = CompletableFuture.supplyAsync(() -> {
            try {
                return hanging.get(selector("made-up"), null);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(fetching.await(30, TimeUnit.SECONDS)).as("the unknown key id's refetch started").isTrue();
        advance(IssuerKeys.MAX_AGE);
        assertThat(hanging.get(selector("old"), null)).as("answered from the set in hand while the refetch hangs")
                .extracting(JWK::getKeyID).containsExactly("old");
        answer.countDown();
        assertThat(unknown.get(30, TimeUnit.SECONDS)).isEmpty();
        assertThat(calls).hasValue(2);
    }

    private List<String> ids(String keyId) throws Exception {
        return keys.get(selector(keyId), null).stream().map(JWK::getKeyID).toList();
    }

    private List<String> messages() {
        return logged.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    private void advance(Duration duration) {
        nanos.addAndGet(duration.toNanos());
    }

    private static JWKSelector selector(String keyId) {
        return new JWKSelector(new JWKMatcher.Builder().keyID(keyId).build());
    }

    private static RSAKey key(String id) {
        try {
            return new RSAKeyGenerator(2048).keyID(id).generate().toPublicJWK();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
