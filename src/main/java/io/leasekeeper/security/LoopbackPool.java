package io.leasekeeper.security;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.config.BeanPostProcessor;

/**
 * The {@code local} profile's check of the connection itself, after {@link LoopbackDatabase} has judged the
 * settings: as each DataSource bean is made, before any other bean (Flyway, the lease store) can have it, its first
 * connection asks PostgreSQL which address it reached ({@link #SERVER_ADDRESS}), and the service refuses to start
 * unless that is a loopback address, or none (a Unix socket). The question is all that connection sends. Whatever
 * the settings did not show (a driver default on the class path, a DataSource class or socket factory of the
 * pool's, connection details that are no property) ends here.
 */
final class LoopbackPool implements BeanPostProcessor {

    private static final Logger log = LoggerFactory.getLogger(LoopbackPool.class);

    /** Schema-qualified, so that no function of the same name on the search path can answer instead. */
    static final String SERVER_ADDRESS = "SELECT pg_catalog.host(pg_catalog.inet_server_addr())";

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean instanceof DataSource dataSource) {
            String address = serverAddress(dataSource, beanName);
            String refusal = LoopbackDatabase.serverRefusal(address);
            if (refusal != null) {
                close(dataSource);
                throw LoopbackDatabase.refused(refusal);
            }
            log.info("The 'local' profile's database is on this machine: DataSource '{}' reached it at {}", beanName,
                    address == null ? "a Unix socket" : address);
        }
        return bean;
    }

    /** The address the first connection reached, as PostgreSQL reports it: null for a Unix socket. */
    static String serverAddress(DataSource dataSource, String beanName) {
        try (Connection connection = dataSource.getConnection();
             Statement statement = connection.createStatement();
             ResultSet row = statement.executeQuery(SERVER_ADDRESS)) {
            row.next();
            return row.getString(1);
        } catch (SQLException e) {
            throw new IllegalStateException("The 'local' profile could not ask the database of DataSource '"
                    + beanName + "' which address it reached, and runs only against a database on this machine", e);
        }
    }

    private static void close(DataSource dataSource) {
        if (dataSource instanceof AutoCloseable pool) {
            try {
                pool.close();
            } catch (Exception e) {
                log.warn("Could not close the refused pool: {}", e.toString());
            }
        }
    }
}
