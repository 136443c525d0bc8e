package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.MigratedDatabase;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The fencing-token rule (db/migration/R__clock_and_tokens.sql) as a property, over random histories run against
 * the real function {@code next_fencing_token(tenant, key, now)} and sequence, on a database of its own. A history is a series of grants on
 * three keys at a simulated database clock that moves forward by up to 300 ms between grants and sometimes steps
 * back by up to 2 s (an NTP step on one primary) or sees its sequence alone set back (every lease row kept), with
 * checkpoints (what a standby or a backup has) and losses
 * (a failover or a restore: the grants since the checkpoint deleted, the sequence set back to its value then,
 * and the clock of the primary that grants from then on at least a second past the last lost grant, the
 * bound of docs/concepts/fencing.md, "How a token is made": a first version of this test let the clock step back below it right
 * after a loss, and found the token a lost grant had had handed out again). Property: every grant's token is larger than every token its key was ever given,
 * the lost ones included, and below 2^53. Each history is one seed, so a failure names the seed that repeats it.
 */
class FencingTokenRuleTest {

    private static final int EVENTS = 60;
    private static final long START = Instant.parse("2026-12-05T00:00:00Z").toEpochMilli();

    private static MigratedDatabase database;
    private static JdbcClient jdbc;

    @BeforeAll
    static void database() {
        database = MigratedDatabase.create("token_rule");
        jdbc = database.jdbc();
    }

    @AfterAll
    static void dropDatabase() {
        database.close();
    }

    static LongStream seeds() {
        return LongStream.range(1, 201);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void everyGrantOutranksEveryTokenItsKeyWasEverGivenAndStaysBelow2To53(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        List<Long> keys = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            keys.add(jdbc.sql("""
                    INSERT INTO lease_key (tenant, program, target_type, target_value, actor)
                    VALUES ('rule', 'default', 'opaque', :value, 'job') RETURNING id
                    """).param("value", seed + "-" + i).query(Long.class).single());
        }
        Map<Long, Long> largestEver = new HashMap<>();
        long clock = START + random.nextLong(Duration.ofDays(365).toMillis());
        // The sequence below the clock's floor (set back by a failover or a restore), or ahead of it.
        long sequence = random.nextBoolean() ? 1 + random.nextLong(1L << 40)
                : (clock / 1000) * (1L << 20) + random.nextLong(1L << 19);
        jdbc.sql("SELECT setval('fencing_token_seq', :value)").param("value", sequence).query(Long.class).single();
        long checkpointSequence = sequence();
        List<UUID> sinceCheckpoint = new ArrayList<>();
        long lastGrantAt = clock;
        long notBefore = Long.MIN_VALUE; // since a loss: the last lost grant's time + 1 s, the design's bound
        for (int event = 0; event < EVENTS; event++) {
            int kind = random.nextInt(20);
            if (kind == 0) { // a checkpoint: what a standby or a backup holds from now on
                checkpointSequence = sequence();
                sinceCheckpoint.clear();
            } else if (kind == 1 && !sinceCheckpoint.isEmpty()) { // a failover or a restore loses what came since
                for (UUID lost : sinceCheckpoint) {
                    jdbc.sql("DELETE FROM lease WHERE id = :id").param("id", lost).update();
                }
                sinceCheckpoint.clear();
                jdbc.sql("SELECT setval('fencing_token_seq', :value)").param("value", checkpointSequence)
                        .query(Long.class).single();
                long failover = 1_000 + random.nextLong(30_000);
                long behind = random.nextLong(failover - 1_000 + 1); // the new clock behind the old, within the bound
                clock = lastGrantAt + failover - behind;
                notBefore = lastGrantAt + 1_000;
            } else if (kind == 3) { // the sequence alone set back, every lease row kept (a dump restored out of order)
                jdbc.sql("SELECT setval('fencing_token_seq', :value)").param("value", 1 + random.nextLong(1L << 40))
                        .query(Long.class).single();
            } else if (kind == 2) { // the clock steps back, never past the bound after a loss
                clock = Math.max(clock - random.nextLong(2_001), notBefore);
            } else {
                clock += random.nextLong(301);
                long key = keys.get(random.nextInt(keys.size()));
                Timestamp at = new Timestamp(clock);
                long token = jdbc.sql("SELECT next_fencing_token('rule', :key, :at)").param("key", key).param("at", at)
                        .query(Long.class).single();
                Long before = largestEver.get(key);
                if (before != null) {
                    assertThat(token).as("seed %d, event %d: the key's token", seed, event).isGreaterThan(before);
                }
                assertThat(token).as("seed %d, event %d", seed, event).isPositive().isLessThan(1L << 53);
                largestEver.put(key, token);
                UUID id = UUID.randomUUID();
                jdbc.sql("""
                        INSERT INTO lease (id, key_id, tenant, owner, holder, fencing_token, state, acquired_at,
                                           expires_at, max_expires_at, ended_at, end_reason, ttl_seconds,
                                           max_lifetime_seconds)
                        VALUES (:id, :key, 'rule', 'o', 'h', :token, 'released', :at, :at, :at, :at, 'released', 1, 1)
                        """).param("id", id).param("key", key).param("token", token).param("at", at).update();
                sinceCheckpoint.add(id);
                lastGrantAt = Math.max(lastGrantAt, clock);
            }
        }
    }

    private long sequence() {
        return jdbc.sql("SELECT last_value FROM fencing_token_seq").query(Long.class).single();
    }
}
