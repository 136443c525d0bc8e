package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** Many clients racing for one key: the key row lock lets exactly one through, in token order. */
class AcquireRaceTest extends IntegrationTest {

    static final int CLIENTS = 32;
    static final int ROUNDS = 50;

    @Test
    void exactlyOneOf32RacingAcquirersWinsEachRoundAndTokensStrictlyIncrease() throws Exception {
        List<String> tokens = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
            tokens.add(writer("client-" + c));
        }
        long previousToken = 0;
        try (ExecutorService pool = Executors.newFixedThreadPool(CLIENTS)) {
            for (int round = 0; round < ROUNDS; round++) {
                CountDownLatch ready = new CountDownLatch(CLIENTS);
                CountDownLatch go = new CountDownLatch(1);
                List<Future<Api.Response>> results = new ArrayList<>();
                for (int c = 0; c < CLIENTS; c++) {
                    String token = tokens.get(c);
                    String holder = "pod-" + c;
                    results.add(pool.submit(() -> {
                        ready.countDown();
                        go.await();
                        return acquire(token, "contended", "worker", holder, 30);
                    }));
                }
                ready.await();
                go.countDown();

                List<Api.Response> granted = new ArrayList<>();
                for (Future<Api.Response> f : results) {
                    Api.Response r = f.get();
                    if (r.status() == 201) {
                        granted.add(r);
                    } else {
                        assertThat(r.status()).as("round %d", round).isEqualTo(409);
                        assertThat(r.code()).isEqualTo("LEASE_HELD");
                    }
                }
                assertThat(granted).as("winners in round %d", round).hasSize(1);
                Api.Response winner = granted.getFirst();
                long fencingToken = winner.body().get("fencingToken").asLong();
                assertThat(fencingToken).as("token of round %d", round).isGreaterThan(previousToken);
                previousToken = fencingToken;

                String owner = winner.body().get("owner").asString();
                String ownerToken = tokens.get(Integer.parseInt(owner.substring("client-".length())));
                Api.Response released = release(ownerToken, winner.body().get("leaseId").asString(), fencingToken);
                assertThat(released.status()).isEqualTo(200);
            }
        }
        assertThat(jdbc.sql("""
                SELECT count(*) FROM lease l JOIN lease_key k ON k.id = l.key_id
                WHERE k.tenant = :tenant AND l.state = 'active'
                """).param("tenant", tenant).query(Long.class).single()).isZero();
    }

    @Test
    void theSameOwnerAcquiringAgainGetsALargerToken() {
        String w = writer("alice");
        var first = acquire(w, "again", "job", "h", 30).body();
        release(w, first.get("leaseId").asString(), first.get("fencingToken").asLong());
        var second = acquire(w, "again", "job", "h", 30).body();
        assertThat(second.get("fencingToken").asLong()).isGreaterThan(first.get("fencingToken").asLong());
        assertThat(second.get("leaseId").asString()).isNotEqualTo(first.get("leaseId").asString());
    }
}
