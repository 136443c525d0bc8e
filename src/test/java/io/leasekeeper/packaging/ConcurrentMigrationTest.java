package io.leasekeeper.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.TestDatabase;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * Why the chart lets every replica migrate at start (docs/guides/deployment.md): replicas that start together
 * on an empty database, each running Flyway on the repository's migrations, apply every migration, versioned and
 * repeatable, exactly once between them, and none fails. Flyway serializes them with a PostgreSQL advisory lock.
 */
class ConcurrentMigrationTest {

    private static final int REPLICAS = 3;

    @Test
    void replicasStartingTogetherApplyEachMigrationExactlyOnce() throws Exception {
        TestDatabase.Connection db = TestDatabase.connection();
        String url = TestDatabase.newDatabase("migrate");
        ExecutorService replicas = Executors.newFixedThreadPool(REPLICAS);
        try {
            CyclicBarrier start = new CyclicBarrier(REPLICAS);
            List<Future<MigrateResult>> results = new ArrayList<>();
            for (int i = 0; i < REPLICAS; i++) {
                results.add(replicas.submit(() -> {
                    Flyway flyway = Flyway.configure().dataSource(url, db.username(), db.password())
                            .locations("filesystem:db/migration").load();
                    start.await();
                    return flyway.migrate();
                }));
            }
            int executed = 0;
            for (Future<MigrateResult> result : results) {
                MigrateResult migration = result.get();
                assertThat(migration.success).isTrue();
                executed += migration.migrationsExecuted;
            }
            int versioned = new File("db/migration").list((dir, name) -> name.matches("V\\d+__.*\\.sql")).length;
            int repeatable = new File("db/migration").list((dir, name) -> name.matches("R__.*\\.sql")).length;
            assertThat(versioned).isPositive();
            assertThat(repeatable).isPositive();
            assertThat(executed).isEqualTo(versioned + repeatable);

            JdbcClient migrated = JdbcClient.create(new DriverManagerDataSource(url, db.username(), db.password()));
            assertThat(migrated.sql("SELECT count(*) FROM flyway_schema_history WHERE success AND version IS NOT NULL")
                    .query(Integer.class).single()).isEqualTo(versioned);
            assertThat(migrated.sql("SELECT count(DISTINCT version) FROM flyway_schema_history")
                    .query(Integer.class).single()).isEqualTo(versioned);
            assertThat(migrated.sql("""
                    SELECT count(*) FROM flyway_schema_history WHERE success AND version IS NULL AND type = 'SQL'
                    """).query(Integer.class).single()).isEqualTo(repeatable);
            assertThat(migrated.sql("SELECT count(DISTINCT script) FROM flyway_schema_history WHERE version IS NULL")
                    .query(Integer.class).single()).isEqualTo(repeatable);
        } finally {
            replicas.shutdownNow();
            TestDatabase.dropDatabase(url);
        }
    }
}
