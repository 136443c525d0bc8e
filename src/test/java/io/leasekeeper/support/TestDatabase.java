package io.leasekeeper.support;

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

    private static String env(String name) {
        String value = System.getenv(name);
        return value == null ? "" : value;
    }
}
