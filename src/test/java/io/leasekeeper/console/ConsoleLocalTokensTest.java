package io.leasekeeper.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.security.LocalProfileTest;
import io.leasekeeper.support.TestDatabase;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/** With the local profile, the console's button mints a development token and signs in with it. */
class ConsoleLocalTokensTest {

    @TempDir
    Path profile;

    @Test
    void theLocalProfilesButtonMintsADevelopmentTokenAndSignsIn() {
        ChromeDriver browser = Chromium.start(profile);
        try (ConfigurableApplicationContext service = LocalProfileTest.start(TestDatabase.connection().url())) {
            int port = ((WebServerApplicationContext) service).getWebServer().getPort();
            WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(15));
            browser.get("http://127.0.0.1:" + port + "/console/");
            WebElement tenant = wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("local-tenant")));
            String name = "local-" + UUID.randomUUID().toString().substring(0, 8);
            tenant.clear();
            tenant.sendKeys(name);
            browser.findElement(By.id("mint")).click();

            wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("leases")));
            assertThat(browser.findElement(By.id("who")).getText()).contains("operator").contains(name)
                    .contains("leases:read").contains("leases:admin");
            wait.until(d -> d.findElement(By.id("lease-count")).getText().equals("No lease matches."));
        } finally {
            browser.quit();
        }
    }
}
