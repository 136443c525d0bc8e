package io.leasekeeper.support;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.UUID;
import org.flywaydb.core.Flyway;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * The real PostgreSQL the tests run against: the one named by {@code LEASEKEEPER_TEST_JDBC_URL} when it
 * is set (CI makes a throwaway cluster), else a Testcontainers PostgreSQL 15 (where Docker runs). With the system
 * property {@code leasekeeper.test.schema=partitioned-by-tenant} (the build's second run of the lease tests), the
 * tests' database is one whose schema is partitioned by tenant ({@link #partitionedByTenant}).
 */
public final class TestDatabase {

    public record Connection(String url, String username, String password) {
    }

    /** The value of {@code leasekeeper.test.schema} that runs the tests on the schema partitioned by tenant. */
    public static final String PARTITIONED_BY_TENANT = "partitioned-by-tenant";

    private static Connection connection;
    private static Connection partitionedByTenant;

    private TestDatabase() {
    }

    /** The database the tests share. */
    public static Connection connection() {
        return PARTITIONED_BY_TENANT.equals(System.getProperty("leasekeeper.test.schema"))
                ? partitionedByTenant() : cluster();
    }

    /**
     * A database of its own (made once per test JVM), migrated by Flyway, then rebuilt with every table keyed by
     * tenant hash-partitioned by tenant ({@code src/test/resources/db/partitioned-by-tenant.sql}): the schema as a
     * distributed engine shards it (docs/guides/scale-out.md).
     */
    public static synchronized Connection partitionedByTenant() {
        if (partitionedByTenant == null) {
            Connection cluster = cluster();
            String url = newDatabase("partitioned_by_tenant");
            Flyway.configure().dataSource(url, cluster.username(), cluster.password())
                    .locations("filesystem:db/migration").load().migrate();
            try (var db = DriverManager.getConnection(url, cluster.username(), cluster.password());
                 var script = TestDatabase.class.getResourceAsStream("/db/partitioned-by-tenant.sql")) {
                db.createStatement().execute(new String(script.readAllBytes(), StandardCharsets.UTF_8));
            } catch (SQLException | IOException e) {
                throw new IllegalStateException("could not partition the schema by tenant", e);
            }
            partitionedByTenant = new Connection(url, cluster.username(), cluster.password());
        }
        return partitionedByTenant;
    }

    private static synchronized Connection cluster() {
        if (connection == null) {
            String url = System.getenv("LEASEKEEPER_TEST_JDBC_URL");
            if (url != null && !url.isBlank()) {
                // User and password may be in the URL; empty values leave them to it.
                connection = new Connection(url, env("LEASEKEEPER_TEST_JDBC_USER"), env("LEASEKEEPER_TEST_JDBC_PASSWORD"));
            } else {
                PostgreSQLContainer container = new PostgreSQLContainer("postgres:15-alpine");
                container.start();
                connection = new Connection(container.getJdbcUrl(), container.getUsername(), container.getPassword());
            }
        }
        return connection;
    }

    /**
     * A new, empty database in the test cluster, named {@code prefix} and a random suffix: for a test whose schema
     * must not be shared (partitions, a migration from an older version). Returns its JDBC URL.
     */
    public static String newDatabase(String prefix) {
        String name = prefix + "_" + UUID.randomUUID().toString().replace("-", "");
        admin().sql("CREATE DATABASE " + name).update();
        return cluster().url().replaceFirst("(//[^/]+/)[^?]+", "$1" + name);
    }

    /**
     * Drops a database that {@link #newDatabase} made, closing the connections still open to it; first keeps its
     * functions' profile when the cluster profiles them ({@link PlpgsqlProfile}).
     */
    public static void dropDatabase(String url) {
        String name = url.replaceFirst("^[^/]*//[^/]+/([^?]+).*$", "$1");
        PlpgsqlProfile.keep(url, name, cluster());
        admin().sql("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)").update();
    }

    private static JdbcClient admin() {
        Connection db = cluster();
        return JdbcClient.create(new DriverManagerDataSource(db.url(), db.username(), db.password()));
    }

    private static String env(String name) {
        String value = System.getenv(name);
        return value == null ? "" : value;
    }
}
