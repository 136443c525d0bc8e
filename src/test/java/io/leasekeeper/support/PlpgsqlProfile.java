package io.leasekeeper.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.SQLException;
import org.postgresql.copy.CopyManager;
import org.postgresql.core.BaseConnection;

/**
 * The PL/pgSQL profile of a test database about to be dropped, kept for the coverage summary
 * (docs/decisions/plpgsql-coverage.md). plpgsql_check's profiler keeps its counts in the cluster's shared memory by
 * function oid and database, and only a session in that database can read them: once the database is dropped they
 * are out of reach. So {@link TestDatabase#dropDatabase} first writes them, as the rows of
 * {@code .ci/plpgsql-profile.sql}, to {@code target/plpgsql-profile/DATABASE.dropped.tsv}, where {@code .ci/plpgsql-coverage}
 * adds those of the databases the tests leave. Nothing happens when the cluster runs without the profiler.
 */
final class PlpgsqlProfile {

    static final Path DIRECTORY = Path.of("target", "plpgsql-profile");
    private static final Path QUERY = Path.of(".ci", "plpgsql-profile.sql");
    private static final String INVALID_CATALOG_NAME = "3D000";

    private PlpgsqlProfile() {
    }

    /** Writes the profile of the database at {@code url} (named {@code name}) when the cluster profiles. */
    static void keep(String url, String name, TestDatabase.Connection cluster) {
        try (var db = DriverManager.getConnection(url, cluster.username(), cluster.password())) {
            var profiler = db.createStatement().executeQuery(
                    "SELECT coalesce(current_setting('plpgsql_check.profiler', true), 'off') = 'on'");
            profiler.next();
            if (!profiler.getBoolean(1)) {
                return;
            }
            db.createStatement().execute("CREATE EXTENSION IF NOT EXISTS plpgsql_check");
            Files.createDirectories(DIRECTORY);
            try (Writer out = Files.newBufferedWriter(DIRECTORY.resolve(name + ".dropped.tsv"), StandardCharsets.UTF_8)) {
                new CopyManager(db.unwrap(BaseConnection.class))
                        .copyOut("COPY (" + Files.readString(QUERY) + ") TO STDOUT", out);
            }
        } catch (SQLException e) {
            if (INVALID_CATALOG_NAME.equals(e.getSQLState())) {
                return; // dropped already: nothing to keep
            }
            throw new IllegalStateException("could not keep the PL/pgSQL profile of " + name, e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
