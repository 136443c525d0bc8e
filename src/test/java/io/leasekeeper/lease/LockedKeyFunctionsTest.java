package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.leasekeeper.support.IntegrationTest;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.springframework.dao.DataAccessException;

/**
 * The function a caller runs with the key's row already locked ({@code lease_hand_over})
 * finds the key again first: when it is not there, it raises SQLSTATE LK001 naming the key (the post-state errors'
 * code, which the service answers 500 INTERNAL_ERROR), rather than answer for a key no one holds.
 * The service never calls it so (its callers lock the row they pass); the calls here, in SQL with a key id no key has,
 * reach the check the way no request can.
 */
class LockedKeyFunctionsTest extends IntegrationTest {

    private static final long NO_SUCH_KEY = -1;

    @Test
    void aHandOverOfAKeyThatIsNotThereIsAnError() {
        assertRefused("SELECT lease_hand_over(:tenant, :key, NULL, 10, NULL)", "lease_hand_over");
    }

    private void assertRefused(String call, String function) {
        assertThatThrownBy(() -> jdbc.sql(call).param("tenant", tenant).param("key", NO_SUCH_KEY).query().singleRow())
                .isInstanceOf(DataAccessException.class)
                .hasMessageContaining(function + " on key " + NO_SUCH_KEY + ": no such key, though the caller locked it")
                .satisfies(e -> assertThat(((DataAccessException) e).getMostSpecificCause())
                        .isInstanceOfSatisfying(SQLException.class, sql -> assertThat(sql.getSQLState()).isEqualTo("LK001")));
    }
}
