package io.leasekeeper.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.leasekeeper.LeasekeeperApplication;
import io.leasekeeper.support.Api;
import io.leasekeeper.support.TestDatabase;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@code local} profile (development tokens) runs only against a database on this machine (contract
 * 1.1, "Tokens"), and there its tokens work on the API.
 */
public class LocalProfileTest {

    @Test
    void localProfileRefusesToStartAgainstADatabaseBeyondLoopback() {
        // 192.0.2.0/24 is TEST-NET-1: the guard refuses before anything could connect to it.
        assertThatThrownBy(() -> start("jdbc:postgresql://192.0.2.10:5432/leasekeeper").close())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'local' profile")
                .hasMessageContaining("'192.0.2.10' (192.0.2.10), which is not a loopback address");
    }

    @Test
    void onlyUrlsWhoseEveryHostIsLoopbackPass() {
        for (String url : List.of("jdbc:postgresql://localhost:5432/leasekeeper",
                "jdbc:postgresql://127.0.0.1/leasekeeper?user=postgres", "jdbc:postgresql://127.8.9.10:1/x",
                "jdbc:postgresql://[::1]:5432/x", "jdbc:postgresql:leasekeeper", "jdbc:postgresql:///leasekeeper",
                "jdbc:postgresql://127.0.0.1:5432,[::1]:5433/x?targetServerType=primary")) {
            assertThat(LoopbackDatabase.refusal(url)).as(url).isNull();
        }
        for (String url : List.of("jdbc:postgresql://192.0.2.10/x", "jdbc:postgresql://[2001:db8::1]:5432/x",
                "jdbc:postgresql://127.0.0.1:5432,192.0.2.11:5432/x", "jdbc:postgresql://[::1/x",
                "jdbc:mysql://127.0.0.1/x")) {
            assertThat(LoopbackDatabase.refusal(url)).as(url).isNotNull();
        }
        assertThat(LoopbackDatabase.refusal(null)).isNotNull();
    }

    @Test
    void onLoopbackTheLocalProfileMintsTokensTheApiAccepts() {
        String url = TestDatabase.connection().url();
        assertThat(LoopbackDatabase.refusal(url)).as("the test database is on this machine").isNull();
        try (ConfigurableApplicationContext context = start(url)) {
            Api api = new Api(((WebServerApplicationContext) context).getWebServer().getPort());
            String tenant = "local-" + UUID.randomUUID().toString().substring(0, 8);
            Api.Response minted = api.post("/local/token", null,
                    Map.of("subject", "dev", "tenant", tenant, "scopes", List.of("leases:write")));
            assertThat(minted.status()).isEqualTo(200);
            String token = minted.body().get("accessToken").asString();
            // The production rules hold here too: the token expires and names the profile's audience.
            JsonNode claims = JsonMapper.builder().build().readTree(Base64.getUrlDecoder().decode(token.split("\\.")[1]));
            assertThat(claims.get("exp").isNumber()).isTrue();
            assertThat(claims.get("aud").toString()).contains("leasekeeper-local");
            Api.Response acquired = api.post("/v1/leases", token, Api.acquireBody("t", "job", "h", 5));
            assertThat(acquired.status()).isEqualTo(201);
            assertThat(acquired.body().get("owner").asString()).isEqualTo("dev");
            assertThat(acquired.body().get("tenant").asString()).isEqualTo(tenant);
        }
    }

    /** The service with the local profile on a free port, against this database (the console's tests use it too). */
    public static ConfigurableApplicationContext start(String jdbcUrl) {
        TestDatabase.Connection db = TestDatabase.connection();
        return new SpringApplicationBuilder(LeasekeeperApplication.class)
                .profiles("local")
                .run("--server.port=0", "--leasekeeper.sweeper.enabled=false",
                        "--spring.datasource.url=" + jdbcUrl,
                        "--spring.datasource.username=" + db.username(),
                        "--spring.datasource.password=" + db.password());
    }
}
