package io.leasekeeper.wait;

import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.sweeper.LeaseSweeper;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * The whole service with waiting requests: the clients that wait run on their own threads, and events are
 * ordered by the service's own count of waiters, never by sleeping. Every test ends with every waiter answered.
 */
abstract class WaitingTest extends IntegrationTest {

    @Autowired
    protected KeyWaiters waiters;

    @Autowired
    protected LeaseSweeper sweeper;

    protected final ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor();

    @AfterEach
    void everyWaiterHasBeenAnswered() {
        clients.shutdownNow();
        await().atMost(Duration.ofSeconds(30)).until(() -> waiters.count() == 0);
    }

    protected void awaitWaiters(int count) {
        await().atMost(Duration.ofSeconds(10)).until(() -> waiters.count() == count);
    }
}
