package io.leasekeeper.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import java.net.URI;
import java.net.http.HttpRequest;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The console's pages over HTTP: served from the jar without a token, each with the strict Content-Security-Policy,
 * and nothing in them from another host. ConsoleBrowserTest drives them in a browser.
 */
class ConsoleTest extends IntegrationTest {

    @Test
    void thePagesAreServedWithoutATokenUnderAContentSecurityPolicyOfThisOriginAlone() {
        for (String path : List.of("/console/", "/console/index.html", "/console/console.js", "/console/console.css",
                "/console/settings.json")) {
            Api.Response page = api.get(path, null);
            assertThat(page.status()).as(path).isEqualTo(200);
            assertThat(page.header("Content-Security-Policy")).as(path)
                    .isEqualTo(ConsoleConfig.CONTENT_SECURITY_POLICY);
            assertThat(page.header("X-Frame-Options")).as(path).isEqualTo("DENY");
            assertThat(page.header("Referrer-Policy")).as(path).isEqualTo("no-referrer");
            assertThat(page.raw()).as(path).doesNotContain("http://").doesNotContain("https://")
                    .doesNotContain("//cdn").doesNotContain("<script>").doesNotContain(" style=");
        }
        assertThat(api.get("/console/", null).raw()).contains("<script src=\"console.js\" defer></script>");
        // The tests' service runs without the local profile: no development tokens offered.
        assertThat(api.get("/console/settings.json", null).body().get("localTokens").asBoolean()).isFalse();
    }

    @Test
    void theConsoleWithoutItsSlashLeadsToItAndTheApiStillNeedsAToken() {
        Api.Response bare = api.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/console")).GET(),
                null);
        assertThat(bare.status()).isEqualTo(302);
        assertThat(bare.header("Location")).endsWith("/console/");
        assertThat(api.get("/v1/leases", null).status()).isEqualTo(401);
        assertThat(api.get("/console/missing.js", null).status()).isEqualTo(404);
    }

    /** Browsers ask every origin for /favicon.ico unasked: it leads to the console's icon, without a token. */
    @Test
    void theFaviconAnswersWithoutAToken() {
        Api.Response favicon = api.get(ConsoleConfig.FAVICON, null);
        assertThat(favicon.status()).isEqualTo(302);
        assertThat(favicon.header("Location")).isEqualTo("/console/favicon.svg");
        Api.Response icon = api.get("/console/favicon.svg", null);
        assertThat(icon.status()).isEqualTo(200);
        assertThat(icon.header("Content-Type")).isEqualTo("image/svg+xml");
        assertThat(icon.header("Content-Security-Policy")).isEqualTo(ConsoleConfig.CONTENT_SECURITY_POLICY);
        assertThat(icon.raw()).startsWith("<svg xmlns=\"http://www.w3.org/2000/svg\"");
        assertThat(api.get("/console/", null).raw())
                .contains("<link rel=\"icon\" href=\"favicon.svg\" type=\"image/svg+xml\">");
        assertThat(api.get("/v1/leases", null).status()).as("the API still needs a token").isEqualTo(401);
    }

    /**
     * The page calls the API on its own origin, which the management port does not serve: there it cannot work, so it
     * is not there (issue 33). Spring Boot's management context takes the application's MVC configurers as its own.
     */
    @Test
    void theConsoleIsNotServedOnTheManagementPort() {
        Api management = new Api(managementPort);
        assertThat(management.get("/actuator/health/liveness", null).status()).isEqualTo(200);
        Map<String, Integer> answers = new TreeMap<>();
        for (String path : List.of("/console", "/console/", "/console/index.html", "/console/console.js",
                "/console/console.css", "/console/settings.json", "/console/index.html?v=1", "/console/favicon.svg",
                ConsoleConfig.FAVICON)) {
            answers.put(path, management.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + managementPort + path)).GET(), null).status());
        }
        assertThat(answers).as("status by path on the management port").allSatisfy((path, status) ->
                assertThat(status).as(path).isEqualTo(404));
    }
}
