package io.leasekeeper.client;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The store's half of fencing, for a PostgreSQL database of the application's own: a protected write commits
 * only if its lease's fencing token is at least the largest token the store has seen for that lease's key.
 * A holder that was paused past its lease (and whose successor has written since) is refused, whatever it
 * believes about its lease.
 *
 * <p>The table, once per database ({@link #DDL}):
 * <pre>
 * CREATE TABLE IF NOT EXISTS leasekeeper_fence (
 *     lease_key  text PRIMARY KEY,          -- the lease's canonical key (Lease.key())
 *     max_token  bigint NOT NULL,           -- the largest fencing token admitted for it
 *     updated_at timestamptz NOT NULL DEFAULT now()
 * );
 * </pre>
 *
 * <p>{@link #admit} runs one conditional upsert in the caller's transaction. It locks the key's fence row until
 * that transaction ends, so the writes of one key commit one at a time in token order: a smaller token that
 * arrives while a larger one's transaction is open waits for it, and is then refused.
 */
public final class JdbcFence {

    /** The fence table; {@code CREATE TABLE IF NOT EXISTS}, so it may run at every start. */
    public static final String DDL = """
            CREATE TABLE IF NOT EXISTS leasekeeper_fence (
                lease_key  text PRIMARY KEY,
                max_token  bigint NOT NULL,
                updated_at timestamptz NOT NULL DEFAULT now()
            )""";

    private static final String ADMIT = """
            INSERT INTO leasekeeper_fence (lease_key, max_token) VALUES (?, ?)
            ON CONFLICT (lease_key) DO UPDATE SET max_token = EXCLUDED.max_token, updated_at = now()
            WHERE leasekeeper_fence.max_token <= EXCLUDED.max_token""";

    /** Work done under an admitted token, on the fence's connection and in its transaction. */
    @FunctionalInterface
    public interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    private JdbcFence() {
    }

    /** Creates the fence table if it does not exist. */
    public static void createTable(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute(DDL);
        }
    }

    /**
     * In the caller's transaction (auto-commit off): admits the token when it is at least the largest seen for
     * the key, recording it; false when a larger token has been admitted, and the caller must roll back.
     */
    public static boolean admit(Connection connection, String leaseKey, long fencingToken) throws SQLException {
        if (connection.getAutoCommit()) {
            throw new IllegalStateException("admit runs in the write's transaction: turn auto-commit off");
        }
        try (PreparedStatement admit = connection.prepareStatement(ADMIT)) {
            admit.setString(1, leaseKey);
            admit.setLong(2, fencingToken);
            return admit.executeUpdate() == 1;
        }
    }

    /**
     * One fenced transaction: checks the held lease ({@link HeldLease#checkValid()}), admits its token, runs
     * the work and commits. A token the store refuses rolls back and throws {@link StaleTokenException}; a lost
     * lease throws {@link LeaseLostException} before anything is written. The connection's auto-commit is
     * restored afterwards.
     */
    public static <T> T write(Connection connection, HeldLease lease, Work<T> work) throws SQLException {
        lease.checkValid();
        boolean autoCommit = connection.getAutoCommit();
        connection.setAutoCommit(false);
        try {
            if (!admit(connection, lease.key(), lease.fencingToken())) {
                throw new StaleTokenException(lease.key(), lease.fencingToken());
            }
            T result = work.run(connection);
            connection.commit();
            return result;
        } catch (SQLException | RuntimeException e) {
            connection.rollback();
            throw e;
        } finally {
            connection.setAutoCommit(autoCommit);
        }
    }

    /** The store has admitted a larger token for the key: this holder's lease has been superseded. */
    public static final class StaleTokenException extends IllegalStateException {
        StaleTokenException(String leaseKey, long token) {
            super("fencing token " + token + " refused for " + leaseKey + ": a newer holder has written");
        }
    }
}
