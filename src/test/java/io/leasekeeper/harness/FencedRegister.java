package io.leasekeeper.harness;

import java.util.List;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The downstream store the workload protects, in a database of its own: a register per key that takes a
 * write only when its fencing token is at least the largest it has accepted (the conditional write users
 * copy), and a log of every write attempt, accepted or not, in the order the register's row lock let
 * them in.
 */
final class FencedRegister {

    /** One attempt; {@code stale} marks a write by a client that paused past its lease's TTL. */
    record Write(long id, String key, long token, String client, boolean stale, boolean accepted) {
    }

    /** The enforcement point: one conditional upsert; 0 rows means a newer token has written already. */
    private static final String FENCED_WRITE = """
            INSERT INTO register (key, last_token, value) VALUES (:key, :token, :value)
            ON CONFLICT (key) DO UPDATE SET last_token = EXCLUDED.last_token, value = EXCLUDED.value
            WHERE register.last_token <= EXCLUDED.last_token
            """;

    private final JdbcClient jdbc;
    private final TransactionTemplate transaction;

    FencedRegister(String jdbcUrl, String user, String password) {
        DriverManagerDataSource dataSource = new DriverManagerDataSource(jdbcUrl, user, password);
        this.jdbc = JdbcClient.create(dataSource);
        this.transaction = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
        jdbc.sql("DROP TABLE IF EXISTS register_write, register").update();
        jdbc.sql("CREATE TABLE register (key text PRIMARY KEY, last_token bigint NOT NULL, value text)").update();
        jdbc.sql("""
                CREATE TABLE register_write (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, key text NOT NULL,
                    token bigint NOT NULL, client text NOT NULL, stale boolean NOT NULL, accepted boolean NOT NULL)
                """).update();
    }

    /** Writes under the token; the log row is written while the register row is locked, so log order is lock order. */
    boolean write(String key, long token, String client, String value, boolean stale) {
        // The register lives on the same server, so it rides out a PostgreSQL restart by retrying. A write
        // whose commit was lost may then be logged twice with the same token, which the checker allows.
        for (int attempt = 1; ; attempt++) {
            try {
                return attempt(key, token, client, value, stale);
            } catch (org.springframework.dao.DataAccessResourceFailureException
                     | org.springframework.transaction.CannotCreateTransactionException
                     | org.springframework.transaction.TransactionSystemException e) {
                // TransactionSystemException: the connection died under the commit or the rollback.
                if (attempt == 60) {
                    throw e;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(java.time.Duration.ofMillis(250).toNanos());
            }
        }
    }

    private boolean attempt(String key, long token, String client, String value, boolean stale) {
        return Boolean.TRUE.equals(transaction.execute(tx -> {
            boolean accepted = jdbc.sql(FENCED_WRITE).param("key", key).param("token", token).param("value", value)
                    .update() == 1;
            if (!accepted) {
                // Take the row lock anyway, so a refused write is logged in order with the accepted ones.
                jdbc.sql("SELECT last_token FROM register WHERE key = :key FOR UPDATE").param("key", key)
                        .query(Long.class).single();
            }
            jdbc.sql("""
                    INSERT INTO register_write (key, token, client, stale, accepted)
                    VALUES (:key, :token, :client, :stale, :accepted)
                    """).param("key", key).param("token", token).param("client", client).param("stale", stale)
                    .param("accepted", accepted).update();
            return accepted;
        }));
    }

    /** The register in its own database, {@code leasekeeper_register}, on the server of the test database. */
    static FencedRegister create(JdbcClient serverAdmin, io.leasekeeper.support.TestDatabase.Connection db) {
        if (serverAdmin.sql("SELECT count(*) FROM pg_database WHERE datname = 'leasekeeper_register'")
                .query(Long.class).single() == 0) {
            serverAdmin.sql("CREATE DATABASE leasekeeper_register").update();
        }
        String url = db.url().replaceFirst("/([^/?]+)(\\?|$)", "/leasekeeper_register$2");
        return new FencedRegister(url, db.username(), db.password());
    }

    List<Write> log() {
        return jdbc.sql("SELECT id, key, token, client, stale, accepted FROM register_write ORDER BY id")
                .query((rs, n) -> new Write(rs.getLong("id"), rs.getString("key"), rs.getLong("token"),
                        rs.getString("client"), rs.getBoolean("stale"), rs.getBoolean("accepted")))
                .list();
    }

    /** The largest token the register has accepted for the key, 0 before any write; -1 while unreachable. */
    long lastToken(String key) {
        try {
            return jdbc.sql("SELECT coalesce(max(last_token), 0) FROM register WHERE key = :key").param("key", key)
                    .query(Long.class).single();
        } catch (org.springframework.dao.DataAccessException e) {
            return -1;
        }
    }
}
