package io.leasekeeper.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.TestDatabase;
import java.util.Base64;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A development token lives an hour, or {@code ttlSeconds} from 1 second to a day; any other lifetime is a 400
 * VALIDATION_FAILED naming the field, never a token for decades nor a 500 (issue 33, finding 3).
 */
class LocalTokenLifetimeTest {

    private static ConfigurableApplicationContext service;
    private static Api api;

    @BeforeAll
    static void start() {
        service = LocalProfileTest.start(TestDatabase.connection().url());
        api = new Api(((WebServerApplicationContext) service).getWebServer().getPort());
    }

    @AfterAll
    static void stop() {
        service.close();
    }

    @ParameterizedTest(name = "ttlSeconds {0}")
    @CsvSource(delimiter = '|', value = {
            "absent | 3600",
            "null   | 3600",
            "1      | 1",
            "86400  | 86400"})
    void aTokenLivesAnHourOrItsLifetimeUpToADay(String ttlSeconds, long lifetime) {
        String body = ttlSeconds.equals("absent") ? "{\"tenant\":\"acme\"}"
                : "{\"tenant\":\"acme\",\"ttlSeconds\":" + ttlSeconds + "}";
        Api.Response minted = api.post("/local/token", null, body);
        assertThat(minted.status()).as(minted.raw()).isEqualTo(200);
        JsonNode claims = JsonMapper.builder().build().readTree(Base64.getUrlDecoder()
                .decode(minted.body().get("accessToken").asString().split("\\.")[1]));
        assertThat(claims.get("exp").asLong() - claims.get("iat").asLong()).isEqualTo(lifetime);
    }

    /** Out of range, and every wrong type: the 2094 token of the finding is Integer.MAX_VALUE seconds. */
    @ParameterizedTest(name = "ttlSeconds {0}")
    @ValueSource(strings = {"-5", "0", "86401", "2147483647", "-2147483648", "9999999999", "\"3600\"", "1.5", "true",
            "[60]", "{\"seconds\":60}"})
    void anyOtherLifetimeIsAValidationProblemNamingTheField(String ttlSeconds) {
        Api.Response refused = api.post("/local/token", null,
                "{\"tenant\":\"acme\",\"ttlSeconds\":" + ttlSeconds + "}");
        assertThat(refused.status()).as(refused.raw()).isEqualTo(400);
        assertThat(refused.code()).isEqualTo("VALIDATION_FAILED");
        assertThat(refused.body().get("errors")).singleElement()
                .satisfies(error -> assertThat(error.get("field").asString()).isEqualTo("ttlSeconds"));
    }
}
