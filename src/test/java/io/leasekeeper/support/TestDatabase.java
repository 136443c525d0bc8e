package io.leasekeeper.support;

import java.util.UUID;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * The real PostgreSQL the tests run against: the one named by {@code LEASEKEEPER_TEST_JDBC_URL} when it
 * is set (CI makes a throwaway cluster), else a Testcontainers PostgreSQL 15 (where Docker runs).
 */
public final class TestDatabase {

    public record Connection(String url, String username, String password) {
    }

    private static Connection connection;

    private TestDatabase() {
    }

    public static synchronized Connection connection() {
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
        return connection().url().replaceFirst("(//[^/]+/)[^?]+", "$1" + name);
    }

    /** Drops a database that {@link #newDatabase} made, closing the connections still open to it. */
    public static void dropDatabase(String url) {
        String name = url.replaceFirst("^[^/]*//[^/]+/([^?]+).*$", "$1");
        admin().sql("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)").update();
    }

    private static JdbcClient admin() {
        Connection db = connection();
        return JdbcClient.create(new DriverManagerDataSource(db.url(), db.username(), db.password()));
    }

    private static String env(String name) {
        String value = System.getenv(name);
        return value == null ? "" : value;
    }
}
