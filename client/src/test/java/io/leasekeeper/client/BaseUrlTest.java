package io.leasekeeper.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The base URL's rules ({@link BaseUrl}) as the builder applies them: requests go under its path, https is
 * required unless the host is loopback or plain http was allowed, and the client never shows its token.
 */
class BaseUrlTest {

    @ParameterizedTest
    @ValueSource(strings = {"/leasekeeper", "/leasekeeper/"})
    void everyRequestGoesUnderTheBaseUrlsPathWithOrWithoutItsTrailingSlash(String prefix) throws Exception {
        List<String> paths = new CopyOnWriteArrayList<>();
        try (ScriptedServer server = new ScriptedServer(exchange -> {
            paths.add(exchange.getRequestMethod() + " " + exchange.getRequestURI());
            ScriptedServer.answer(exchange, 200, "application/json", ScriptedServer.lease(30, 30_000));
        })) {
            LeasekeeperClient client = LeasekeeperClient.builder(URI.create(server.uri() + prefix)).build();
            LeaseKey key = LeaseKey.of(Target.opaque("k"), "a");
            Lease lease = client.acquire(AcquireRequest.of(key, "h", 30));
            client.watch(lease.leaseId(), 5);
            client.current(key);

            assertThat(client.baseUrl()).hasToString(server.uri() + "/leasekeeper/");
            assertThat(paths).containsExactly(
                    "POST /leasekeeper/v1/leases",
                    "GET /leasekeeper/v1/leases/" + lease.leaseId() + "?waitSeconds=5",
                    "GET /leasekeeper/v1/leases/current?targetType=opaque&target=k&actor=a");
        }
    }

    @Test
    void aBaseUrlWithoutAPathGetsItsRootSlash() {
        assertThat(LeasekeeperClient.builder(URI.create("https://leasekeeper.internal:8443")).build().baseUrl())
                .hasToString("https://leasekeeper.internal:8443/");
    }

    @ParameterizedTest
    @ValueSource(strings = {"http://leasekeeper.internal:8080", "http://10.0.0.7/leasekeeper",
            "http://localhost.example.com", "http://127.0.0.1.nip.io", "http://[::2]:8080", "http://128.0.0.1"})
    void plainHttpToAHostThatIsNotLoopbackIsRefused(String url) {
        assertThatThrownBy(() -> LeasekeeperClient.builder(URI.create(url)).token("s3cret").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("Leasekeeper's base URL " + url + " must be https unless its host is loopback")
                .hasMessageContaining("allowPlainHttp(true)")
                .hasMessageNotContaining("s3cret");
    }

    @ParameterizedTest
    @ValueSource(strings = {"http://localhost:8080", "http://LOCALHOST", "http://127.0.0.1:8080", "http://127.9.8.7",
            "http://[::1]:8080", "http://[0:0:0:0:0:0:0:1]", "https://leasekeeper.internal", "HTTPS://10.0.0.7"})
    void httpsAnywhereAndPlainHttpToLoopbackAreAccepted(String url) {
        assertThat(LeasekeeperClient.builder(URI.create(url)).build().baseUrl()).hasToString(url + "/");
    }

    @Test
    void loopbackIsTheLiteralNameOrAddressNeverAResolvedName() {
        assertThat(BaseUrl.isLoopback("127.0.0.1")).isTrue();
        assertThat(BaseUrl.isLoopback("[::ffff:127.0.0.1]")).as("IPv4-mapped ::1 is 127.0.0.1").isTrue();
        assertThat(BaseUrl.isLoopback("127.0.0.256")).isFalse();
        assertThat(BaseUrl.isLoopback("[::1")).isFalse();
        assertThat(BaseUrl.isLoopback("localhost.")).as("a name other than localhost, not resolved").isFalse();
    }

    @Test
    void plainHttpToAnyHostIsAcceptedWhenAllowedExplicitly() {
        assertThat(LeasekeeperClient.builder(URI.create("http://leasekeeper.internal:8080")).allowPlainHttp(true)
                .build().baseUrl()).hasToString("http://leasekeeper.internal:8080/");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            ftp://leasekeeper.internal              | must be an absolute http or https URL
            /leasekeeper                            | must be an absolute http or https URL
            http:leasekeeper                        | must be an absolute http or https URL
            https://under_score/                    | must name a host
            https://user:pass@leasekeeper.internal/ | must not carry user info, a query or a fragment
            https://leasekeeper.internal/?a=b       | must not carry user info, a query or a fragment
            https://leasekeeper.internal/#top       | must not carry user info, a query or a fragment
            """)
    void aBaseUrlThatBreaksARuleIsRefusedNamingIt(String url, String rule) {
        assertThatThrownBy(() -> LeasekeeperClient.builder(URI.create(url)).allowPlainHttp(true).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Leasekeeper's base URL " + url + " " + rule
                        + (rule.startsWith("must not carry") ? " (the token goes in the Authorization header, the"
                        + " API's paths and queries are the client's)" : ""));
    }

    @Test
    void theClientsToStringNamesTheServiceNotTheToken() {
        LeasekeeperClient client = LeasekeeperClient.builder(URI.create("https://leasekeeper.internal/lk"))
                .token("s3cret-token").build();

        assertThat(client).hasToString("LeasekeeperClient[https://leasekeeper.internal/lk/]");
    }
}
