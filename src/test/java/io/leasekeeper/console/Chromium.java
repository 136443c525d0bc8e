package io.leasekeeper.console;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.file.Path;
import java.util.logging.Level;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;

/**
 * Debian's chromium, headless, driven through Debian's chromedriver: nothing is downloaded. A test that needs it is
 * skipped where the packages are not installed, unless {@code LEASEKEEPER_TEST_REQUIRE_BROWSER=true} (CI sets it,
 * and installs both packages), which makes their absence a failure.
 */
final class Chromium {

    private static final File BINARY = new File("/usr/bin/chromium");
    private static final File DRIVER = new File("/usr/bin/chromedriver");

    private Chromium() {
    }

    /** A new browser with an empty profile in {@code profile}, its console messages kept for the test to read. */
    static ChromeDriver start(Path profile) {
        boolean installed = BINARY.canExecute() && DRIVER.canExecute();
        if (!installed && "true".equals(System.getenv("LEASEKEEPER_TEST_REQUIRE_BROWSER"))) {
            throw new IllegalStateException("LEASEKEEPER_TEST_REQUIRE_BROWSER is set, but " + BINARY + " or " + DRIVER
                    + " is missing (Debian packages chromium and chromium-driver)");
        }
        assumeTrue(installed, "Debian's chromium and chromium-driver are not installed");
        ChromeOptions options = new ChromeOptions();
        options.setBinary(BINARY);
        // As root, without a display, and without the background traffic a closed network refuses.
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--user-data-dir=" + profile.toAbsolutePath(), "--window-size=1280,1000");
        LoggingPreferences logs = new LoggingPreferences();
        logs.enable(LogType.BROWSER, Level.ALL);
        options.setCapability("goog:loggingPrefs", logs);
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(DRIVER)
                .usingAnyFreePort().build();
        return new ChromeDriver(service, options);
    }
}
