package io.leasekeeper.support;

import org.flywaydb.core.Flyway;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

/**
 * A database of a test class's own ({@link TestDatabase#newDatabase}), migrated by Flyway to the newest version, with
 * one connection that every statement of the class shares; {@link #close} drops it. For a test that must not share
 * the schema or rows of the others (a property over random histories, an extension created for the test alone).
 */
public final class MigratedDatabase implements AutoCloseable {

    private final String url;
    private final SingleConnectionDataSource connection;

    private MigratedDatabase(String url, SingleConnectionDataSource connection) {
        this.url = url;
        this.connection = connection;
    }

    /** Makes and migrates a database named {@code prefix} and a random suffix. */
    public static MigratedDatabase create(String prefix) {
        TestDatabase.Connection cluster = TestDatabase.connection();
        String url = TestDatabase.newDatabase(prefix);
        Flyway.configure().dataSource(url, cluster.username(), cluster.password()).locations("filesystem:db/migration")
                .load().migrate();
        return new MigratedDatabase(url, new SingleConnectionDataSource(url, cluster.username(), cluster.password(), true));
    }

    public JdbcClient jdbc() {
        return JdbcClient.create(connection);
    }

    @Override
    public void close() {
        connection.destroy();
        TestDatabase.dropDatabase(url);
    }
}
