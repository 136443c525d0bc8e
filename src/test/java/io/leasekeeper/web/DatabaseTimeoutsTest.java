package io.leasekeeper.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.dao.QueryTimeoutException;

/**
 * PostgreSQL's own bounds on the service's connections: a request whose statement waits on a key's row lock
 * gives up after lock_timeout (2 s) and answers 503 DATABASE_UNAVAILABLE, long before the driver's socket
 * timeout (10 s) would; a statement that runs away ends at statement_timeout (5 s).
 */
class DatabaseTimeoutsTest extends IntegrationTest {

    @Test
    void everyConnectionOfThePoolHasTheTimeouts() {
        assertThat(jdbc.sql("SHOW lock_timeout").query(String.class).single()).isEqualTo("2s");
        assertThat(jdbc.sql("SHOW statement_timeout").query(String.class).single()).isEqualTo("5s");
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
