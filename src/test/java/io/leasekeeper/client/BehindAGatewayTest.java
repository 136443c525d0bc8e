package io.leasekeeper.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.leasekeeper.client.autoconfigure.LeasekeeperClientAutoConfiguration;
import io.leasekeeper.support.IntegrationTest;
import io.leasekeeper.support.PathGateway;
import java.net.InetAddress;
import java.net.URI;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The library and the starter against the whole service behind a gateway that routes by path
 * ({@link PathGateway}): every call goes under the base URL's path, with or without its trailing slash, and none
 * (nor its token) reaches another backend; and plain http to a host that is not loopback is refused unless
 * allowed, then works.
 */
class BehindAGatewayTest extends IntegrationTest {

    private static final LeaseKey KEY = LeaseKey.of(Target.opaque("repo/main"), "indexer");

    private PathGateway gateway;

    @BeforeEach
    void gateway() {
        gateway = new PathGateway(port);
    }

    @AfterEach
    void close() {
        gateway.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "/"})
    void everyCallOfTheClientGoesUnderTheBaseUrlsPath(String slash) throws Exception {
        LeasekeeperClient alice = LeasekeeperClient.builder(URI.create(gateway.url(slash))).token(writer("alice"))
                .build();

        Lease acquired = alice.acquire(AcquireRequest.of(KEY, "pod-1", 30));
        assertThat(alice.renew(acquired.leaseId(), acquired.fencingToken(), 60).ttlSeconds()).isEqualTo(60);
        assertThat(alice.inspect(acquired.leaseId()).state()).isEqualTo("active");
        assertThat(alice.current(KEY).leaseId()).isEqualTo(acquired.leaseId());
        assertThat(alice.list(ListQuery.active().withActor("indexer")).items()).hasSize(1);
        assertThat(alice.watch(acquired.leaseId(), 1).state()).isEqualTo("active");
        assertThat(alice.release(acquired.leaseId(), acquired.fencingToken()).state()).isEqualTo("released");
        assertThat(alice.history(acquired.leaseId())).extracting(LeaseEvent::type)
                .containsExactly("ACQUIRED", "RENEWED", "RELEASED");
        try (HeldLease held = alice.hold(AcquireRequest.of(KEY, "pod-1", 30), HoldOptions.defaults())) {
            LeasekeeperClient admin = LeasekeeperClient.builder(URI.create(gateway.url(slash))).token(admin("root"))
                    .build();
            assertThat(admin.revoke(held.leaseId(), "maintenance").state()).isEqualTo("revoked");
            assertThat(held.lost().toCompletableFuture().get(20, TimeUnit.SECONDS)).as("its watch, through the gateway")
                    .isEqualTo(HeldLease.Loss.REVOKED);
        }

        assertThat(gateway.sentElsewhere()).isEmpty();
    }

    @Test
    void theStartersClientGoesUnderTheBaseUrlsPath() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LeasekeeperClientAutoConfiguration.class))
                .withPropertyValues("leasekeeper.client.base-url=" + gateway.url(""),
                        "leasekeeper.client.token=" + writer("alice"), "leasekeeper.client.holder=starter-test")
                .run(context -> {
                    LeasekeeperClient client = context.getBean(LeasekeeperClient.class);
                    Lease acquired = client.acquire(AcquireRequest.of(KEY, "starter-test", 30));
                    assertThat(client.release(acquired.leaseId(), acquired.fencingToken()).state())
                            .isEqualTo("released");
                });

        assertThat(gateway.sentElsewhere()).isEmpty();
    }

    @Test
    void plainHttpToAHostThatIsNotLoopbackIsRefusedUnlessAllowedThenItWorks() throws Exception {
        String host = InetAddress.getLocalHost().getHostName();
        assumeThat(BaseUrl.isLoopback(host)).as("this host's name is not written as loopback").isFalse();
        URI byName = URI.create("http://" + host + ":" + port);

        assertThatThrownBy(() -> LeasekeeperClient.builder(byName).token(writer("alice")).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be https unless its host is loopback");
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LeasekeeperClientAutoConfiguration.class))
                .withPropertyValues("leasekeeper.client.base-url=" + byName, "leasekeeper.client.holder=h")
                .run(context -> assertThat(context).hasFailed());

        LeasekeeperClient allowed = LeasekeeperClient.builder(byName).allowPlainHttp(true).token(writer("alice"))
                .build();
        assertThat(allowed.acquire(AcquireRequest.of(KEY, "pod-1", 30)).owner()).isEqualTo("alice");
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(LeasekeeperClientAutoConfiguration.class))
                .withPropertyValues("leasekeeper.client.base-url=" + byName, "leasekeeper.client.holder=h",
                        "leasekeeper.client.allow-plain-http=true", "leasekeeper.client.token=" + writer("bob"))
                .run(context -> assertThatThrownBy(() -> context.getBean(LeasekeeperClient.class)
                        .acquire(AcquireRequest.of(KEY, "h", 30))).isInstanceOf(ProblemException.LeaseHeld.class));
    }

    @Test
    void plainHttpToLocalhostNeedsNoAllowing() {
        LeasekeeperClient client = LeasekeeperClient.builder(URI.create("http://localhost:" + port))
                .token(writer("alice")).build();

        assertThat(client.acquire(AcquireRequest.of(KEY, "pod-1", 30)).owner()).isEqualTo("alice");
    }
}
