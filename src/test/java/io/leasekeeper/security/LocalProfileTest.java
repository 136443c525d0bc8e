package io.leasekeeper.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.leasekeeper.LeasekeeperApplication;
import io.leasekeeper.support.Api;
import io.leasekeeper.support.TestDatabase;
import java.io.IOException;
import java.net.ConnectException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@code local} profile (development tokens) runs only against a database on this machine (contract
 * 1.1, "Tokens"), listens only on this machine unless told otherwise, and there its tokens work on the API.
 * Every way around the guard that issue 33 found (a host in the URL's parameters or the pool's driver
 * properties, a {@code pg_service.conf} entry, a URL of the pool's own) is refused before anything connects.
 */
public class LocalProfileTest {

    /** 192.0.2.0/24 is TEST-NET-1: the guard refuses before anything could connect to it. */
    private static final String ELSEWHERE = "192.0.2.2";

    @Test
    void localProfileRefusesToStartAgainstADatabaseBeyondLoopback() {
        assertRefused("jdbc:postgresql://192.0.2.10:5432/leasekeeper")
                .hasMessageContaining("'192.0.2.10' (192.0.2.10), which is not a loopback address");
    }

    @Test
    void onlyUrlsWhoseEveryHostIsLoopbackPass() {
        for (String url : List.of("jdbc:postgresql://localhost:5432/leasekeeper",
                "jdbc:postgresql://127.0.0.1/leasekeeper?user=postgres", "jdbc:postgresql://127.8.9.10:1/x",
                "jdbc:postgresql://[::1]:5432/x", "jdbc:postgresql:leasekeeper", "jdbc:postgresql:///leasekeeper",
                "jdbc:postgresql://127.0.0.1:5432,[::1]:5433/x?targetServerType=primary",
                "jdbc:postgresql://localhost/x?port=5433&dbname=other&options=-c%20search_path%3Dx")) {
            assertThat(LoopbackDatabase.refusal("spring.datasource.url", url)).as(url).isNull();
        }
        for (String url : List.of("jdbc:postgresql://192.0.2.10/x", "jdbc:postgresql://[2001:db8::1]:5432/x",
                "jdbc:postgresql://127.0.0.1:5432,192.0.2.11:5432/x", "jdbc:postgresql://[::1/x",
                "jdbc:mysql://127.0.0.1/x")) {
            assertThat(LoopbackDatabase.refusal("spring.datasource.url", url)).as(url).isNotNull();
        }
        assertThat(LoopbackDatabase.refusal("spring.datasource.url", null)).isNotNull();
    }

    /** pgjdbc takes the server from these parameters over the URL's host (issue 33, finding 3). */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "jdbc:postgresql://localhost:5432/leasekeeper?PGHOST=192.0.2.2&PGPORT=5999 | PGHOST",
            "jdbc:postgresql://localhost:5432/leasekeeper?sslmode=disable&host=192.0.2.2 | host",
            "jdbc:postgresql:leasekeeper?Host=192.0.2.2 | Host",
            "jdbc:postgresql://localhost:5432/leasekeeper?PGHOSTADDR=192.0.2.2 | PGHOSTADDR",
            "jdbc:postgresql://localhost/leasekeeper?service=production | service",
            "jdbc:postgresql:leasekeeper?service=production | service"})
    void aUrlParameterThatChoosesTheServerIsRefused(String url, String parameter) {
        assertRefused(url)
                .hasMessageContaining("spring.datasource.url sets " + parameter + ", which chooses the server");
    }

    /** A driver property sets the host where the URL names none ({@code jdbc:postgresql:db}), as in the finding. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"PGHOST", "PGHOSTADDR", "service"})
    void aDriverPropertyThatChoosesTheServerIsRefused(String property) {
        assertRefused("jdbc:postgresql:leasekeeper",
                "--spring.datasource.hikari.data-source-properties." + property + "=" + ELSEWHERE)
                .hasMessageContaining("spring.datasource.hikari.data-source-properties sets " + property
                        + ", which chooses the server instead of spring.datasource.url");
    }

    @Test
    void aUrlOfThePoolsOwnIsRefused() {
        assertRefused(TestDatabase.connection().url(),
                "--spring.datasource.hikari.jdbc-url=jdbc:postgresql://" + ELSEWHERE + ":5432/leasekeeper")
                .hasMessageContaining("spring.datasource.hikari.jdbc-url (jdbc:postgresql://192.0.2.2:5432/leasekeeper)"
                        + " differs from spring.datasource.url");
    }

    /** The finding's form: the environment variable, read by Spring Boot's relaxed binding, not by its name. */
    @Test
    void thePoolsUrlFromTheEnvironmentIsRefusedToo() {
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().replace(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, Map.of(
                        "SPRING_DATASOURCE_URL", "jdbc:postgresql://localhost:5432/leasekeeper",
                        "SPRING_DATASOURCE_HIKARI_JDBC_URL", "jdbc:postgresql://" + ELSEWHERE + ":5432/leasekeeper")));
        ConfigurationPropertySources.attach(environment);
        assertThat(LoopbackDatabase.refusal(environment)).isEqualTo("spring.datasource.hikari.jdbc-url"
                + " (jdbc:postgresql://192.0.2.2:5432/leasekeeper) differs from spring.datasource.url");
    }

    /** Flyway's own URL would migrate, and the listener's would LISTEN on, another database. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"spring.flyway.url", "leasekeeper.wait.listen-url"})
    void theServicesOtherConnectionsStayOnLoopbackToo(String property) {
        assertRefused(TestDatabase.connection().url(),
                "--" + property + "=jdbc:postgresql://" + ELSEWHERE + ":5432/leasekeeper")
                .hasMessageContaining(property + " names host '192.0.2.2' (192.0.2.2), which is not a loopback"
                        + " address");
    }

    /**
     * The check of the connection itself (LoopbackPool) decides from the address PostgreSQL reports. This machine's
     * test database listens on loopback only, so a connection to a server address beyond it cannot be made here:
     * the decision is checked with the addresses it would read, and the query with a real (loopback) connection.
     */
    @Test
    void theServerAddressOfTheConnectionDecides() throws IOException {
        for (String local : List.of("127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1", "127.0.0.1/32")) {
            assertThat(LoopbackDatabase.serverRefusal(local)).as(local).isNull();
        }
        assertThat(LoopbackDatabase.serverRefusal(null)).as("a Unix socket").isNull();
        for (String remote : List.of("192.0.2.2", "10.0.0.5", "2001:db8::1", "::ffff:192.0.2.2", "0.0.0.0")) {
            assertThat(LoopbackDatabase.serverRefusal(remote)).as(remote)
                    .contains("the pool's first connection reached the database at")
                    .endsWith("which is not a loopback address");
        }
        assertThat(LoopbackDatabase.refused(LoopbackDatabase.serverRefusal(ELSEWHERE))).hasMessage(
                "The 'local' profile serves development tokens and runs only against a database on this machine: the"
                + " pool's first connection reached the database at 192.0.2.2, which is not a loopback address."
                + " Point spring.datasource.url at localhost (bash src/local/run makes such a database), or run"
                + " without the 'local' profile.");

        TestDatabase.Connection db = TestDatabase.connection();
        String address = LoopbackPool.serverAddress(new DriverManagerDataSource(db.url(), db.username(), db.password()),
                "test");
        assertThat(address).as("the test database's server address").isNotNull();
        assertThat(InetAddress.getByName(address).isLoopbackAddress()).as(address).isTrue();
    }

    /** The pool's first connection is checked before anything else has the pool: before Flyway migrates. */
    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void onLoopbackTheLocalProfileMintsTokensTheApiAccepts(CapturedOutput output) {
        String url = TestDatabase.connection().url();
        assertThat(LoopbackDatabase.refusal("spring.datasource.url", url)).as("the test database is on this machine")
                .isNull();
        try (ConfigurableApplicationContext context = start(url, "--spring.datasource.hikari.jdbc-url=" + url)) {
            List<String> lines = output.getOut().lines().toList();
            int checked = indexOf(lines, "The 'local' profile's database is on this machine: DataSource 'dataSource'"
                    + " reached it at 127.0.0.1");
            assertThat(checked).as("the check's line").isNotNegative();
            assertThat(indexOf(lines, "Successfully validated")).as("Flyway's validation, after the check")
                    .isGreaterThan(checked);

            Api api = new Api(((WebServerApplicationContext) context).getWebServer().getPort());
            String tenant = "local-" + UUID.randomUUID().toString().substring(0, 8);
            Api.Response minted = api.post("/local/token", null,
                    Map.of("subject", "dev", "tenant", tenant, "scopes", List.of("leases:write")));
            assertThat(minted.status()).isEqualTo(200);
            String token = minted.body().get("accessToken").asString();
            // The production rules hold here too: the token expires and names the profile's audience.
            JsonNode claims = JsonMapper.builder().build()
                    .readTree(Base64.getUrlDecoder().decode(token.split("\\.")[1]));
            assertThat(claims.get("exp").asLong() - claims.get("iat").asLong()).as("an hour by default")
                    .isEqualTo(3600);
            assertThat(claims.get("aud").toString()).contains("leasekeeper-local");
            Api.Response acquired = api.post("/v1/leases", token, Api.acquireBody("t", "job", "h", 5));
            assertThat(acquired.status()).isEqualTo(201);
            assertThat(acquired.body().get("owner").asString()).isEqualTo("dev");
            assertThat(acquired.body().get("tenant").asString()).isEqualTo(tenant);
        }
    }

    /** Both ports on 127.0.0.1: from this machine's other addresses nothing answers (issue 33, finding 3). */
    @Test
    void theProfileListensOnLoopbackOnly() throws Exception {
        try (ConfigurableApplicationContext context = start(TestDatabase.connection().url())) {
            List<Integer> ports = ports(context);
            assertThat(get("127.0.0.1", ports.get(0), "/console/settings.json")).isEqualTo(200);
            assertThat(get("127.0.0.1", ports.get(1), "/actuator/health/liveness")).isEqualTo(200);
            for (int port : ports) {
                for (InetAddress address : otherAddresses()) {
                    assertThat(refused(address, port)).as(address + ":" + port).isTrue();
                }
            }
        }
    }

    /** {@code --server.address} chooses another address on purpose, and the management port follows it. */
    @Test
    void anExplicitAddressMovesBothPorts() throws Exception {
        // All of 127.0.0.0/8 is this machine's loopback (Linux answers on every address of it without setup).
        try (ConfigurableApplicationContext context = start(TestDatabase.connection().url(),
                "--server.address=127.0.0.2")) {
            List<Integer> ports = ports(context);
            assertThat(get("127.0.0.2", ports.get(0), "/console/settings.json")).isEqualTo(200);
            assertThat(get("127.0.0.2", ports.get(1), "/actuator/health/liveness")).isEqualTo(200);
            for (int port : ports) {
                assertThat(refused(InetAddress.getByName("127.0.0.1"), port)).as("127.0.0.1:" + port).isTrue();
            }
        }
    }

    /** The guard's own start-up failure, before anything connected (the settings are judged before any bean). */
    private static AbstractThrowableAssert<?, ? extends Throwable> assertRefused(String jdbcUrl, String... more) {
        return assertThatThrownBy(() -> start(jdbcUrl, more).close()).isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("The 'local' profile serves development tokens and runs only against a"
                        + " database on this machine: ");
    }

    /** The service with the local profile on free ports, against this database (the console's tests use it too). */
    public static ConfigurableApplicationContext start(String jdbcUrl, String... more) {
        TestDatabase.Connection db = TestDatabase.connection();
        List<String> arguments = new ArrayList<>(List.of("--server.port=0", "--management.server.port=0",
                "--leasekeeper.sweeper.enabled=false",
                "--spring.datasource.url=" + jdbcUrl,
                "--spring.datasource.username=" + db.username(),
                "--spring.datasource.password=" + db.password()));
        arguments.addAll(List.of(more));
        return new SpringApplicationBuilder(LeasekeeperApplication.class)
                .profiles("local")
                .run(arguments.toArray(String[]::new));
    }

    private static List<Integer> ports(ConfigurableApplicationContext context) {
        return List.of(((WebServerApplicationContext) context).getWebServer().getPort(),
                context.getEnvironment().getRequiredProperty("local.management.port", Integer.class));
    }

    private static int get(String host, int port, String path) throws IOException, InterruptedException {
        try (HttpClient http = HttpClient.newHttpClient()) {
            return http.send(HttpRequest.newBuilder(URI.create("http://" + host + ":" + port + path)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        }
    }

    /** Whether a connection to {@code address:port} is refused (nothing listens there). */
    private static boolean refused(InetAddress address, int port) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(address, port), 5000);
            return false;
        } catch (ConnectException e) {
            return true;
        }
    }

    /** This machine's IPv4 addresses beyond loopback (none on a machine without a network). */
    private static List<InetAddress> otherAddresses() throws SocketException {
        List<InetAddress> addresses = new ArrayList<>();
        for (NetworkInterface network : NetworkInterface.networkInterfaces().toList()) {
            if (network.isUp()) {
                network.inetAddresses().filter(a -> a instanceof Inet4Address && !a.isLoopbackAddress()
                        && !a.isLinkLocalAddress()).forEach(addresses::add);
            }
        }
        return addresses;
    }

    private static int indexOf(List<String> lines, String text) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(text)) {
                return i;
            }
        }
        return -1;
    }
}
