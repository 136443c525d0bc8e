package io.leasekeeper.wait;

import io.leasekeeper.config.LeasekeeperProperties;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Properties;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.jdbc.autoconfigure.JdbcConnectionDetails;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Receives the notifications of freed keys ({@link FreedKeys}) on one connection of its own, not from the
 * pool (a pooled connection would be held forever, and LISTEN needs a session of its own, which a
 * transaction-pooling proxy does not give: {@code leasekeeper.wait.listen-url} can bypass one), and wakes
 * this instance's waiters.
 *
 * <p>The connection polls for notifications every {@link #POLL}; its socket timeout is far above that, and
 * a query every {@link #KEEPALIVE} finds a connection that died silently. While it is down, waiters try
 * again every {@code leasekeeper.wait.fallback-poll}; once it is back, every waiter is woken once, since
 * notifications sent meanwhile are lost.
 */
@Component
class FreedKeysListener implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(FreedKeysListener.class);
    static final Duration POLL = Duration.ofMillis(500);
    static final Duration KEEPALIVE = Duration.ofSeconds(5);
    /** Seconds; well above the poll, so only a dead connection times out. */
    private static final int SOCKET_TIMEOUT = 10;
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(2);

    private final String url;
    private final String username;
    private final String password;
    private final KeyWaiters waiters;
    private final Counter notifications;
    private final Counter reconnects;
    private volatile boolean running;
    private volatile Connection connection;
    private Thread thread;

    FreedKeysListener(JdbcConnectionDetails database, LeasekeeperProperties properties, KeyWaiters waiters,
                      MeterRegistry registry) {
        String listenUrl = properties.waiting().listenUrl();
        this.url = listenUrl == null ? database.getJdbcUrl() : listenUrl;
        this.username = database.getUsername();
        this.password = database.getPassword();
        this.waiters = waiters;
        this.notifications = Counter.builder("leasekeeper.wait.notifications")
                .description("Notifications of freed keys received").register(registry);
        this.reconnects = Counter.builder("leasekeeper.wait.listener.reconnects")
                .description("Times the listener for freed keys connected again after losing its connection")
                .register(registry);
        Gauge.builder("leasekeeper.wait.listener.up", waiters, w -> w.listening() ? 1 : 0)
                .description("1 while the listener for freed keys is connected").register(registry);
    }

    @Override
    public void start() {
        running = true;
        thread = Thread.ofPlatform().daemon().name("freed-keys-listener").start(this::run);
    }

    @Override
    public void stop() {
        running = false;
        Connection open = connection;
        if (open != null) {
            try {
                open.close();
            } catch (SQLException e) {
                log.debug("Closing the listener's connection", e);
            }
        }
        thread.interrupt();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    private void run() {
        boolean connectedBefore = false;
        Duration backoff = Duration.ofMillis(100);
        while (running) {
            try (Connection open = connect()) {
                connection = open;
                try (Statement statement = open.createStatement()) {
                    statement.execute("LISTEN " + FreedKeys.CHANNEL);
                }
                waiters.listening(true);
                backoff = Duration.ofMillis(100);
                if (connectedBefore) {
                    reconnects.increment();
                    log.info("The listener for freed keys is connected again; every waiter tries once more");
                    waiters.freedAll();
                }
                connectedBefore = true;
                receive(open);
            } catch (SQLException e) {
                waiters.listening(false);
                if (!running) {
                    return;
                }
                log.warn("The listener for freed keys lost its connection ({}); waiters poll until it is back",
                        e.getMessage());
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException interrupted) {
                    return;
                }
                backoff = backoff.multipliedBy(2).compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : backoff.multipliedBy(2);
            }
        }
        waiters.listening(false);
    }

    private void receive(Connection open) throws SQLException {
        PGConnection pg = open.unwrap(PGConnection.class);
        long checkedAt = System.nanoTime();
        while (running) {
            PGNotification[] received = pg.getNotifications((int) POLL.toMillis());
            if (received != null) {
                for (PGNotification notification : received) {
                    notifications.increment();
                    FreedKeys.parse(notification.getParameter()).ifPresentOrElse(waiters::freed, waiters::freedAll);
                }
            }
            if (System.nanoTime() - checkedAt > KEEPALIVE.toNanos()) {
                try (Statement statement = open.createStatement()) {
                    statement.execute("SELECT 1");
                }
                checkedAt = System.nanoTime();
            }
        }
    }

    private Connection connect() throws SQLException {
        Properties properties = new Properties();
        if (username != null && !username.isEmpty()) {
            properties.setProperty("user", username);
        }
        if (password != null && !password.isEmpty()) {
            properties.setProperty("password", password);
        }
        properties.setProperty("connectTimeout", "2");
        properties.setProperty("socketTimeout", Integer.toString(SOCKET_TIMEOUT));
        properties.setProperty("ApplicationName", "leasekeeper-listener");
        return DriverManager.getConnection(url, properties);
    }
}
