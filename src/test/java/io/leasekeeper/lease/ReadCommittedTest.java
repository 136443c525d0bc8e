package io.leasekeeper.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.TestDatabase;
import io.leasekeeper.support.TestTokens;
import java.sql.DriverManager;
import java.sql.ResultSet;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The service's transactions run at READ COMMITTED whatever the database's default: here a database whose default is
 * REPEATABLE READ, under which the locking rule's later statements would not see the key's newest state. The
 * database stays in the throwaway test cluster (the context holds its connections until the run ends).
 */
@SpringBootTest(properties = {"leasekeeper.sweeper.enabled=false", "leasekeeper.idempotency.cleanup-enabled=false",
        "leasekeeper.audit.cleanup-enabled=false"})
class ReadCommittedTest {

    private static String url;

    @DynamicPropertySource
    static void repeatableReadByDefault(DynamicPropertyRegistry registry) throws Exception {
        TestDatabase.Connection cluster = TestDatabase.connection();
        url = TestDatabase.newDatabase("repeatable_read");
        String name = url.replaceFirst("^[^/]*//[^/]+/([^?]+).*$", "$1");
        try (var db = DriverManager.getConnection(url, cluster.username(), cluster.password())) {
            db.createStatement().execute("ALTER DATABASE " + name + " SET default_transaction_isolation = 'repeatable read'");
        }
        registry.add("spring.datasource.url", () -> url);
        registry.add("spring.datasource.username", cluster::username);
        registry.add("spring.datasource.password", cluster::password);
        registry.add("spring.security.oauth2.resourceserver.jwt.public-key-location", TestTokens::publicKeyLocation);
        registry.add("spring.security.oauth2.resourceserver.jwt.issuer-uri", () -> TestTokens.ISSUER);
        registry.add("spring.security.oauth2.resourceserver.jwt.audiences", () -> TestTokens.AUDIENCE);
    }

    @Autowired
    JdbcClient jdbc;

    @Autowired
    TransactionTemplate transactions;

    @Test
    void theServicesTransactionsAreReadCommittedThoughTheDatabasesDefaultIsRepeatableRead() throws Exception {
        TestDatabase.Connection cluster = TestDatabase.connection();
        try (var db = DriverManager.getConnection(url, cluster.username(), cluster.password());
             ResultSet rs = db.createStatement().executeQuery("SHOW transaction_isolation")) {
            rs.next();
            assertThat(rs.getString(1)).as("a connection of its own").isEqualTo("repeatable read");
        }
        String isolation = transactions.execute(status ->
                jdbc.sql("SHOW transaction_isolation").query(String.class).single());
        assertThat(isolation).isEqualTo("read committed");
    }
}
