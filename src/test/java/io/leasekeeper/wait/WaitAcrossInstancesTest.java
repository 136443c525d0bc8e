package io.leasekeeper.wait;

import static io.leasekeeper.wait.WaitingAcquireTest.body;
import static io.leasekeeper.wait.WaitingAcquireTest.id;
import static io.leasekeeper.wait.WaitingAcquireTest.token;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.LeasekeeperApplication;
import io.leasekeeper.support.Api;
import io.leasekeeper.support.CuttableProxy;
import io.leasekeeper.support.TestDatabase;
import io.leasekeeper.support.TestTokens;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Waiting across instances: two services on one database, as in a deployment. A release through one
 * instance wakes a waiter on the other (PostgreSQL's NOTIFY); a waiter whose instance lost its listener's
 * connection is still answered (the fallback poll), and the listener comes back by itself; a service that
 * shuts down answers its waiters first.
 */
class WaitAcrossInstancesTest {

    private static final List<ConfigurableApplicationContext> started = new ArrayList<>();
    private static CuttableProxy listenerProxy;
    private static ConfigurableApplicationContext first;
    private static ConfigurableApplicationContext second;
    private static final ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor();

    private String tenant;

    @BeforeAll
    static void twoInstances() {
        TestDatabase.Connection db = TestDatabase.connection();
        URI target = URI.create(db.url().substring("jdbc:".length()));
        listenerProxy = new CuttableProxy(target.getHost(), target.getPort());
        first = start();
        // The second instance's listener reaches PostgreSQL through a proxy the tests can cut.
        second = start("--leasekeeper.wait.listen-url="
                + db.url().replaceFirst("//[^/]+/", "//127.0.0.1:" + listenerProxy.port() + "/"));
        await().atMost(Duration.ofSeconds(10)).until(() -> listening(second));
    }

    @AfterAll
    static void stop() throws Exception {
        started.forEach(ConfigurableApplicationContext::close);
        listenerProxy.close();
        clients.shutdownNow();
    }

    @BeforeEach
    void freshTenant() {
        tenant = "x-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    void aReleaseThroughOneInstanceWakesAWaiterOnAnother() throws Exception {
        Api.Response held = api(first).post("/v1/leases", writer("alice"), Api.acquireBody("k", "job", "a", 60));
        CompletableFuture<Api.Response> waiting = waitOn(second, writer("bob"), 20);
        await().atMost(Duration.ofSeconds(10)).until(() -> waiters(second).count() == 1);

        api(first).post("/v1/leases/" + id(held) + "/release", writer("alice"), Map.of("fencingToken", token(held)));

        Api.Response granted = waiting.get(10, TimeUnit.SECONDS);
        assertThat(granted.status()).isEqualTo(201);
        assertThat(granted.body().get("owner").asString()).isEqualTo("bob");
        assertThat(meters(second).get("leasekeeper.wait.notifications").counter().count()).isPositive();
    }

    @Test
    void waitersOnTwoInstancesAreHandedTheKeyInTheOrderTheyQueued() throws Exception {
        Api.Response held = api(first).post("/v1/leases", writer("alice"), Api.acquireBody("k", "job", "a", 60));
        CompletableFuture<Api.Response> bob = waitOn(second, writer("bob"), 20);
        await().atMost(Duration.ofSeconds(10)).until(() -> waiters(second).count() == 1);
        CompletableFuture<Api.Response> carol = waitOn(first, writer("carol"), 20);
        await().atMost(Duration.ofSeconds(10)).until(() -> waiters(first).count() == 1);

        // Released through the instance carol waits on: the key still goes to bob, who queued first.
        api(first).post("/v1/leases/" + id(held) + "/release", writer("alice"), Map.of("fencingToken", token(held)));
        Api.Response bobs = bob.get(10, TimeUnit.SECONDS);
        assertThat(bobs.status()).isEqualTo(201);
        assertThat(bobs.body().get("owner").asString()).isEqualTo("bob");
        assertThat(carol).isNotDone();

        api(second).post("/v1/leases/" + id(bobs) + "/release", writer("bob"), Map.of("fencingToken", token(bobs)));
        Api.Response carols = carol.get(10, TimeUnit.SECONDS);
        assertThat(carols.status()).isEqualTo(201);
        assertThat(carols.body().get("owner").asString()).isEqualTo("carol");
        assertThat(token(carols)).isGreaterThan(token(bobs));
    }

    @Test
    void aWaiterIsAnsweredWhileItsInstanceListenerIsCutAndTheListenerComesBack() throws Exception {
        double reconnectsBefore = meters(second).get("leasekeeper.wait.listener.reconnects").counter().count();
        Api.Response held = api(first).post("/v1/leases", writer("alice"), Api.acquireBody("k", "job", "a", 60));
        CompletableFuture<Api.Response> waiting = waitOn(second, writer("bob"), 20);
        await().atMost(Duration.ofSeconds(10)).until(() -> waiters(second).count() == 1);

        listenerProxy.cut();
        await().atMost(Duration.ofSeconds(10)).until(() -> !listening(second));
        api(first).post("/v1/leases/" + id(held) + "/release", writer("alice"), Map.of("fencingToken", token(held)));

        // Not by a notification (the listener is down) nor by the holder's 60 s TTL: by the fallback poll.
        Api.Response granted = waiting.get(10, TimeUnit.SECONDS);
        assertThat(granted.status()).isEqualTo(201);

        listenerProxy.restore();
        await().atMost(Duration.ofSeconds(15)).until(() -> listening(second));
        assertThat(meters(second).get("leasekeeper.wait.listener.reconnects").counter().count())
                .isGreaterThan(reconnectsBefore);
    }

    @Test
    void aServiceThatShutsDownAnswersItsWaitersFirst() throws Exception {
        ConfigurableApplicationContext leaving = start();
        Api.Response held = api(first).post("/v1/leases", writer("alice"), Api.acquireBody("k", "job", "a", 60));
        CompletableFuture<Api.Response> waiting = waitOn(leaving, writer("bob"), 30);
        await().atMost(Duration.ofSeconds(10)).until(() -> waiters(leaving).count() == 1);

        leaving.close();

        Api.Response answered = waiting.get(10, TimeUnit.SECONDS);
        assertThat(answered.status()).isEqualTo(409);
        assertThat(answered.code()).isEqualTo("LEASE_HELD");
        assertThat(answered.body().get("holder").get("owner").asString()).isEqualTo("alice");
        assertThat(id(held)).isNotBlank();
    }

    private CompletableFuture<Api.Response> waitOn(ConfigurableApplicationContext instance, String token, int seconds) {
        return CompletableFuture.supplyAsync(() -> api(instance).post("/v1/leases", token, body("k", seconds, 0)),
                clients);
    }

    private String writer(String subject) {
        return TestTokens.token(subject, tenant, TestTokens.WRITE);
    }

    private static boolean listening(ConfigurableApplicationContext instance) {
        return meters(instance).get("leasekeeper.wait.listener.up").gauge().value() == 1;
    }

    private static KeyWaiters waiters(ConfigurableApplicationContext instance) {
        return instance.getBean(KeyWaiters.class);
    }

    private static MeterRegistry meters(ConfigurableApplicationContext instance) {
        return instance.getBean(MeterRegistry.class);
    }

    private static Api api(ConfigurableApplicationContext instance) {
        return new Api(((WebServerApplicationContext) instance).getWebServer().getPort());
    }

    private static ConfigurableApplicationContext start(String... more) {
        TestDatabase.Connection db = TestDatabase.connection();
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--leasekeeper.sweeper.enabled=false",
                "--leasekeeper.wait.fallback-poll=300ms",
                "--spring.datasource.url=" + db.url(),
                "--spring.datasource.username=" + db.username(),
                "--spring.datasource.password=" + db.password(),
                "--spring.security.oauth2.resourceserver.jwt.public-key-location=" + TestTokens.publicKeyLocation()));
        args.addAll(List.of(more));
        ConfigurableApplicationContext context = new SpringApplicationBuilder(LeasekeeperApplication.class)
                .run(args.toArray(String[]::new));
        started.add(context);
        return context;
    }
}
