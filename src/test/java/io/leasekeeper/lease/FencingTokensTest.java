package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.dao.DataIntegrityViolationException;

/**
 * Contract 1.1, "Fencing tokens": per key, a new lease's token is larger than every token the key was ever
 * given, also after the sequence is set back (as a failover or a restore that lost commits leaves it) and after
 * grants the database has forgotten, once its clock has passed the second they were made in. Tokens stay
 * below 2^53; tokens of different keys may be equal, and the list pages them once each.
 */
class FencingTokensTest extends IntegrationTest {

    private static final long TOKENS_PER_SECOND = 1L << 20;

    @Test
    void aSequenceSetBackStillGivesTheKeyALargerTokenAndJumpsToTheClocksFloor() {
        var first = acquire(writer("alice"), "k", "job", "a", 60).body();
        long firstToken = first.get("fencingToken").asLong();
        assertThat(release(writer("alice"), first.get("leaseId").asString(), firstToken).status()).isEqualTo(200);

        jdbc.sql("SELECT setval('fencing_token_seq', 1)").query(Long.class).single();

        long again = acquire(writer("bob"), "k", "job", "b", 60).body().get("fencingToken").asLong();
        assertThat(again).isGreaterThan(firstToken);
        var other = acquire(writer("bob"), "other", "job", "b", 60).body();
        assertThat(other.get("fencingToken").asLong()).as("another key's token is at least its second's floor")
                .isGreaterThanOrEqualTo(acquiredSecond(other.get("leaseId").asString()) * TOKENS_PER_SECOND);
    }

    @Test
    void aGrantAfterAForgottenGrantIsLargerThanIt() {
        var forgotten = acquire(writer("alice"), "k", "job", "a", 60).body();
        long forgottenToken = forgotten.get("fencingToken").asLong();
        long forgottenSecond = acquiredSecond(forgotten.get("leaseId").asString());
        // What a restore from before that grant leaves: no lease row, and the sequence behind it.
        assertThat(jdbc.sql("DELETE FROM lease WHERE id = CAST(:id AS uuid)")
                .param("id", forgotten.get("leaseId").asString()).update()).isOne();
        jdbc.sql("SELECT setval('fencing_token_seq', 1)").query(Long.class).single();
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(50))
                .until(() -> flooredSecondsNow() > forgottenSecond);

        long granted = acquire(writer("bob"), "k", "job", "b", 60).body().get("fencingToken").asLong();

        assertThat(granted).isGreaterThan(forgottenToken);
    }

    @Test
    void tokensStayBelowTwoToThe53() {
        var lease = acquire(writer("alice"), "k", "job", "a", 60).body();
        assertThat(lease.get("fencingToken").asLong()).isPositive().isLessThan(1L << 53);
        assertThatThrownBy(() -> jdbc.sql("UPDATE lease SET fencing_token = :token WHERE id = CAST(:id AS uuid)")
                .param("token", 1L << 53).param("id", lease.get("leaseId").asString()).update())
                .isInstanceOf(DataIntegrityViolationException.class).hasMessageContaining("lease_fencing_token_exact");
    }

    @Test
    void leasesOfDifferentKeysWithEqualTokensArePagedOnceEach() {
        List<String> ids = new ArrayList<>();
        for (String target : List.of("a", "b", "c")) {
            ids.add(acquire(writer("alice"), target, "job", "h", 60).body().get("leaseId").asString());
        }
        long shared = jdbc.sql("SELECT max(fencing_token) FROM lease WHERE tenant = :tenant")
                .param("tenant", tenant).query(Long.class).single();
        assertThat(jdbc.sql("UPDATE lease SET fencing_token = :token WHERE tenant = :tenant")
                .param("token", shared).param("tenant", tenant).update()).isEqualTo(3);

        List<String> paged = new ArrayList<>();
        String cursor = null;
        do {
            Api.Response page = api.get("/v1/leases?limit=1" + (cursor == null ? "" : "&cursor=" + cursor),
                    reader("alice"));
            assertThat(page.status()).isEqualTo(200);
            page.body().get("items").forEach(item -> paged.add(item.get("leaseId").asString()));
            cursor = page.body().get("nextCursor").isNull() ? null : page.body().get("nextCursor").asString();
        } while (cursor != null && paged.size() <= 3);

        assertThat(paged).containsExactlyInAnyOrderElementsOf(ids);
        // A cursor of the version before per-key tokens (a token alone) still continues below its token.
        String oldCursor = Base64.getUrlEncoder().withoutPadding()
                .encodeToString(("t:" + shared).getBytes(StandardCharsets.US_ASCII));
        Api.Response below = api.get("/v1/leases?cursor=" + oldCursor, reader("alice"));
        assertThat(below.status()).isEqualTo(200);
        assertThat(below.body().get("items").size()).isZero();
    }

    private long acquiredSecond(String leaseId) {
        return jdbc.sql("SELECT floor(extract(epoch FROM acquired_at))::bigint FROM lease WHERE id = CAST(:id AS uuid)")
                .param("id", leaseId).query(Long.class).single();
    }

    private long flooredSecondsNow() {
        return jdbc.sql("SELECT floor(extract(epoch FROM lease_now()))::bigint").query(Long.class).single();
    }
}
