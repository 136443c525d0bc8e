package io.leasekeeper.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.dao.QueryTimeoutException;

/**
 * PostgreSQL's own bounds on the service's connections: a request whose statement waits on a key's row lock
 * gives up after lock_timeout (2 s) and answers 503 DATABASE_UNAVAILABLE, long before the driver's socket
 * timeout (10 s) would; a statement that runs away ends at statement_timeout (5 s).
 */
class DatabaseTimeoutsTest extends IntegrationTest {

    @Autowired
    DataSource dataSource;

    @Test
    void everyConnectionOfThePoolHasTheTimeouts() {
        assertThat(jdbc.sql("SHOW lock_timeout").query(String.class).single()).isEqualTo("2s");
        assertThat(jdbc.sql("SHOW statement_timeout").query(String.class).single()).isEqualTo("5s");
        assertThat(jdbc.sql("SHOW idle_in_transaction_session_timeout").query(String.class).single()).isEqualTo("10s");
        assertThat(jdbc.sql("SHOW tcp_keepalives_idle").query(String.class).single()).isEqualTo("10");
        assertThat(jdbc.sql("SHOW tcp_keepalives_interval").query(String.class).single()).isEqualTo("5");
        assertThat(jdbc.sql("SHOW tcp_keepalives_count").query(String.class).single()).isEqualTo("3");
    }

    /**
     * A stalled instance (a frozen VM or process, a partition) looks to PostgreSQL like a session that sends
     * nothing more inside its transaction. Here one of the service's own pooled sessions locks a key and sends
     * nothing more: PostgreSQL ends it at idle_in_transaction_session_timeout (10 s), and the key's holder renews.
     * Polled against a deadline, not timed.
     */
    @Test
    void aSessionStalledInsideATransactionOnAKeyLosesItsLockWithinTheIdleBound() throws Exception {
        var lease = acquire(writer("alice"), "nightly", "report", "pod-1", 60).body();
        Connection stalled = dataSource.getConnection();
        try {
            stalled.setAutoCommit(false);
            int pid;
            try (PreparedStatement lock = stalled.prepareStatement(
                    "SELECT pg_backend_pid() FROM lease_key WHERE tenant = ? FOR NO KEY UPDATE")) {
                lock.setString(1, tenant);
                var rows = lock.executeQuery();
                assertThat(rows.next()).isTrue();
                pid = rows.getInt(1);
            }
            // The instance stalls here: nothing more is sent on the session.
            await().atMost(Duration.ofSeconds(25)).pollInterval(Duration.ofMillis(200)).until(() -> jdbc.sql(
                    "SELECT count(*) FROM pg_stat_activity WHERE pid = :pid").param("pid", pid).query(Long.class)
                    .single() == 0);
            assertThat(renew(writer("alice"), lease.get("leaseId").asString(), lease.get("fencingToken").asLong())
                    .status()).as("the key's lock went with the session").isEqualTo(200);
            assertThatThrownBy(() -> stalled.createStatement().execute("SELECT 1"))
                    .as("the stalled session was ended").isInstanceOf(SQLException.class);
        } finally {
            stalled.close();
        }
    }

    @Test
    void aRenewWaitingOnAKeyLockedElsewhereAnswers503AfterTheLockTimeout() throws Exception {
        var lease = acquire(writer("alice"), "nightly", "report", "pod-1", 60).body();
        TestDatabase.Connection db = TestDatabase.connection();
        try (Connection blocker = DriverManager.getConnection(db.url(), db.username(), db.password())) {
            blocker.setAutoCommit(false);
            try (PreparedStatement lock = blocker.prepareStatement(
                    "SELECT 1 FROM lease_key WHERE tenant = ? FOR UPDATE")) {
                lock.setString(1, tenant);
                assertThat(lock.executeQuery().next()).isTrue();
            }
            long start = System.nanoTime();
            Api.Response renewed = renew(writer("alice"), lease.get("leaseId").asString(),
                    lease.get("fencingToken").asLong());
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            blocker.rollback();

            assertThat(renewed.status()).isEqualTo(503);
            assertThat(renewed.code()).isEqualTo("DATABASE_UNAVAILABLE");
            assertThat(renewed.header("Retry-After")).isEqualTo("2");
            assertThat(millis).as("not before lock_timeout").isGreaterThanOrEqualTo(2_000);
            assertThat(millis).as("well before the socket timeout").isLessThan(9_000);
        }
        assertThat(renew(writer("alice"), lease.get("leaseId").asString(), lease.get("fencingToken").asLong())
                .status()).as("nothing was written, the lease renews once the lock is gone").isEqualTo(200);
    }

    @Test
    void aRunawayStatementEndsAtTheStatementTimeoutAsTheTimeoutTheProblemHandlerAnswers() {
        assertThatThrownBy(() -> jdbc.sql("SELECT pg_sleep(30)").query().singleRow())
                .isInstanceOf(QueryTimeoutException.class);
    }
}
