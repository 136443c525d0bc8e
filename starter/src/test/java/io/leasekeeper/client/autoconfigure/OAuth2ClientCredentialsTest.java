package io.leasekeeper.client.autoconfigure;

import static io.leasekeeper.client.autoconfigure.LeasekeeperClientAutoConfigurationTest.rootCause;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.leasekeeper.client.LeasekeeperClient;
import io.leasekeeper.client.ProblemException;
import io.leasekeeper.client.ServiceUnavailableException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.security.oauth2.client.autoconfigure.OAuth2ClientAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.security.oauth2.client.OAuth2AuthorizeRequest;
import org.springframework.security.oauth2.client.OAuth2AuthorizedClient;
import org.springframework.security.oauth2.client.OAuth2AuthorizedClientManager;
import org.springframework.security.oauth2.client.registration.ClientRegistration;
import org.springframework.security.oauth2.core.AuthorizationGrantType;
import org.springframework.security.oauth2.core.OAuth2AccessToken;

/**
 * Client credentials through Spring Security's OAuth2 client, against a token endpoint served on loopback by
 * the JDK: used only when the class is there and {@code leasekeeper.client.oauth2.registration-id} is set,
 * cached between requests, and a failure of the endpoint is the client's {@link ServiceUnavailableException}.
 */
class OAuth2ClientCredentialsTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(OAuth2ClientAutoConfiguration.class,
                    LeasekeeperClientAutoConfiguration.class));

    private HttpServer server;
    private final List<String> tokenRequests = new CopyOnWriteArrayList<>();
    private final List<String> bearers = new CopyOnWriteArrayList<>();
    private volatile int tokenStatus = 200;

    @BeforeEach
    void startTokenEndpoint() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/token", exchange -> {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            tokenRequests.add(exchange.getRequestHeaders().getFirst("Authorization") + " " + body);
            answer(exchange, tokenStatus, "application/json", tokenStatus == 200
                    ? "{\"access_token\":\"issued-" + tokenRequests.size() + "\",\"token_type\":\"Bearer\",\"expires_in\":3600}"
                    : "{\"error\":\"temporarily_unavailable\"}");
        });
        // Where the auto-configured client's requests land: only their Authorization header is looked at.
        server.createContext("/v1/leases/", exchange -> {
            bearers.add(exchange.getRequestHeaders().getFirst("Authorization"));
            answer(exchange, 404, "application/problem+json",
                    "{\"status\":404,\"code\":\"LEASE_NOT_FOUND\",\"title\":\"Lease not found\"}");
        });
        server.start();
    }

    @AfterEach
    void stopTokenEndpoint() {
        server.stop(0);
    }

    private String[] registration() {
        String endpoint = "http://127.0.0.1:" + server.getAddress().getPort();
        return new String[] {"leasekeeper.client.base-url=" + endpoint,
                "leasekeeper.client.oauth2.registration-id=leasekeeper",
                "spring.security.oauth2.client.registration.leasekeeper.client-id=indexer",
                "spring.security.oauth2.client.registration.leasekeeper.client-secret=s3cret",
                "spring.security.oauth2.client.registration.leasekeeper.authorization-grant-type=client_credentials",
                "spring.security.oauth2.client.registration.leasekeeper.provider=idp",
                "spring.security.oauth2.client.provider.idp.token-uri=" + endpoint + "/token"};
    }

    @Test
    void everyRequestCarriesTheTokenEndpointsAccessTokenAskedForOnceWhileItIsFresh() {
        runner.withPropertyValues(registration()).run(context -> {
            LeasekeeperClient client = context.getBean(LeasekeeperClient.class);

            assertThatThrownBy(() -> client.inspect(UUID.randomUUID())).isInstanceOf(ProblemException.class);
            assertThatThrownBy(() -> client.inspect(UUID.randomUUID())).isInstanceOf(ProblemException.class);

            assertThat(bearers).containsExactly("Bearer issued-1", "Bearer issued-1");
            String basic = "Basic " + Base64.getEncoder().encodeToString("indexer:s3cret".getBytes(StandardCharsets.UTF_8));
            assertThat(tokenRequests).singleElement().asString()
                    .startsWith(basic).contains("grant_type=client_credentials");
        });
    }

    @Test
    void aTokenEndpointThatFailsIsTheServiceUnavailableToTheCaller() {
        tokenStatus = 503;
        runner.withPropertyValues(registration()).run(context -> {
            LeasekeeperClient client = context.getBean(LeasekeeperClient.class);

            assertThatThrownBy(() -> client.inspect(UUID.randomUUID()))
                    .isInstanceOf(ServiceUnavailableException.class)
                    .hasMessageContaining("no bearer token");
            assertThat(bearers).isEmpty();
        });
    }

    @Test
    void theTokenIsAskedOfTheAuthorizedClientManagerForTheRegistrationAsItsOwnPrincipal() {
        List<OAuth2AuthorizeRequest> asked = new CopyOnWriteArrayList<>();
        OAuth2AuthorizedClientManager manager = request -> {
            asked.add(request);
            return new OAuth2AuthorizedClient(registration("leasekeeper"), request.getPrincipal().getName(),
                    new OAuth2AccessToken(OAuth2AccessToken.TokenType.BEARER, "from-the-manager",
                            java.time.Instant.now(), java.time.Instant.now().plusSeconds(60)));
        };

        String token = new ClientCredentialsToken(manager, "leasekeeper").get();

        assertThat(token).isEqualTo("from-the-manager");
        assertThat(asked).singleElement().satisfies(request -> {
            assertThat(request.getClientRegistrationId()).isEqualTo("leasekeeper");
            assertThat(request.getPrincipal().getName()).isEqualTo("leasekeeper");
        });
    }

    @Test
    void withoutARegistrationIdTheStaticTokenIsUsedEvenWithTheOAuth2ClientPresent() {
        String[] properties = {"leasekeeper.client.token=static-token",
                "spring.security.oauth2.client.registration.leasekeeper.client-id=indexer",
                "spring.security.oauth2.client.registration.leasekeeper.authorization-grant-type=client_credentials",
                "spring.security.oauth2.client.registration.leasekeeper.provider=idp",
                "spring.security.oauth2.client.provider.idp.token-uri=http://127.0.0.1:1/token"};
        runner.withPropertyValues(properties).run(context -> {
            assertThat(context.getBean(LeasekeeperTokenSupplier.class)).isNotInstanceOf(ClientCredentialsToken.class);
            assertThat(context.getBean(LeasekeeperTokenSupplier.class).get()).isEqualTo("static-token");
        });
    }

    @Test
    void withoutTheOAuth2ClientOnTheClasspathTheStaticTokenIsUsed() {
        runner.withClassLoader(new FilteredClassLoader("org.springframework.security.oauth2.client"))
                .withPropertyValues("leasekeeper.client.token=static-token")
                .run(context -> assertThat(context.getBean(LeasekeeperTokenSupplier.class).get())
                        .isEqualTo("static-token"));
    }

    @Test
    void aRegistrationIdWithoutTheOAuth2ClientOnTheClasspathStopsStartUp() {
        runner.withClassLoader(new FilteredClassLoader("org.springframework.security.oauth2.client"))
                .withPropertyValues(registration())
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(rootCause(context.getStartupFailure()))
                            .hasMessageContaining("Spring Security's OAuth2 client is not on the classpath");
                });
    }

    @Test
    void aRegistrationIdThatNamesNoRegistrationStopsStartUp() {
        runner.withPropertyValues("leasekeeper.client.oauth2.registration-id=missing").run(context -> {
            assertThat(context).hasFailed();
            assertThat(rootCause(context.getStartupFailure())).hasMessageContaining(
                    "no such OAuth2 client registration: set spring.security.oauth2.client.registration.missing");
        });
    }

    @Test
    void aRegistrationOfAnotherGrantTypeStopsStartUp() {
        runner.withPropertyValues("leasekeeper.client.oauth2.registration-id=login",
                "spring.security.oauth2.client.registration.login.client-id=web",
                "spring.security.oauth2.client.registration.login.authorization-grant-type=authorization_code",
                "spring.security.oauth2.client.registration.login.redirect-uri=http://127.0.0.1/callback",
                "spring.security.oauth2.client.registration.login.provider=idp",
                "spring.security.oauth2.client.provider.idp.authorization-uri=http://127.0.0.1:1/authorize",
                "spring.security.oauth2.client.provider.idp.token-uri=http://127.0.0.1:1/token")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(rootCause(context.getStartupFailure())).hasMessageContaining(
                            "has authorization-grant-type authorization_code: leasekeeper.client.oauth2 needs"
                                    + " client_credentials");
                });
    }

    private static ClientRegistration registration(String id) {
        return ClientRegistration.withRegistrationId(id).clientId("indexer")
                .authorizationGrantType(AuthorizationGrantType.CLIENT_CREDENTIALS).tokenUri("http://127.0.0.1:1/token")
                .build();
    }

    private static void answer(HttpExchange exchange, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", type);
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
        exchange.close();
    }
}
