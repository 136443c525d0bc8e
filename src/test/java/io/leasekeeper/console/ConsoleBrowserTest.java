package io.leasekeeper.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.Keys;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.interactions.Actions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;
import tools.jackson.databind.JsonNode;

/**
 * The console in a real browser ({@link Chromium}). Each test signs in with a bearer token of its own tenant, as an
 * operator pastes one. The screenshots of the main views land in target/console-screenshots (docs/guides/console.md shows
 * them).
 */
class ConsoleBrowserTest extends IntegrationTest {

    private static final Path SCREENSHOTS = Path.of("target", "console-screenshots");

    @TempDir
    Path profile;

    private ChromeDriver browser;
    private WebDriverWait wait;

    @BeforeEach
    void browser() {
        browser = Chromium.start(profile);
        // The page replaces its rows at every poll: an element read before may be gone.
        wait = new WebDriverWait(browser, Duration.ofSeconds(15));
        wait.ignoring(StaleElementReferenceException.class);
    }

    @AfterEach
    void close() {
        if (browser != null) {
            browser.quit();
        }
    }

    @Test
    void anAdminFiltersWatchesACountdownReadsALeasesStoryAndRevokesItWithAReason() throws Exception {
        Api.Response build = acquire(writer("alice"), "build-1", "builder", "ci-runner-3", 300);
        String buildId = build.body().get("leaseId").asString();
        long buildToken = build.body().get("fencingToken").asLong();
        for (int i = 0; i < 3; i++) {
            assertThat(renew(writer("alice"), buildId, buildToken).status()).isEqualTo(200);
        }
        assertThat(acquire(writer("bob"), "deploy-7", "deployer", "runner-b", 40).status()).isEqualTo(201);

        signIn(admin("root"));
        assertThat(rows()).hasSize(2);
        screenshot("leases");

        // Filter by owner: bob's lease alone.
        browser.findElement(By.id("f-owner")).sendKeys("bob");
        browser.findElement(By.id("apply")).click();
        wait.until(d -> rows().size() == 1);
        assertThat(rows().getFirst().getText()).contains("runner-b").contains("bob");

        // Its countdown moves down, by the browser's monotonic clock from the answer's remainingMs.
        double first = seconds(countdown());
        assertThat(first).isBetween(1.0, 40.0);
        wait.until(d -> seconds(countdown()) < first - 0.3);

        browser.findElement(By.id("f-owner")).clear();
        browser.findElement(By.id("apply")).click();
        wait.until(d -> rows().size() == 2);

        // Alice's lease: its story, with the three renewals grouped.
        browser.findElement(By.cssSelector("button.open-lease[data-lease-id='" + buildId + "']")).click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("story")));
        wait.until(d -> d.findElement(By.id("story-title")).getText().contains("build-1"));
        assertThat(browser.switchTo().activeElement().getAttribute("id")).isEqualTo("story-title");
        String timeline = browser.findElement(By.id("timeline")).getText();
        assertThat(timeline).contains("Granted to alice with fencing token " + buildToken)
                .contains("Renewed 3 times by alice");
        assertThat(browser.findElement(By.id("key-leases")).getText()).contains(String.valueOf(buildToken));
        screenshot("story");

        // Revoke: a reason, then a confirmation naming the key and the holder.
        WebElement revoke = browser.findElement(By.id("revoke"));
        assertThat(revoke.isDisplayed()).isTrue();
        browser.findElement(By.id("revoke-reason")).sendKeys("stuck job, freeing the key for the retry");
        revoke.click();
        WebElement dialog = wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("confirm-revoke")));
        assertThat(dialog.getText()).contains("build-1").contains("ci-runner-3");
        screenshot("revoke");
        browser.findElement(By.id("confirm-yes")).click();
        wait.until(d -> d.findElement(By.id("revoke-result")).getText().contains("revoked"));
        wait.until(d -> d.findElement(By.id("timeline")).getText()
                .contains("Revoked by root"));
        assertThat(browser.findElement(By.id("timeline")).getText())
                .contains("stuck job, freeing the key for the retry");
        assertThat(browser.findElement(By.id("story-summary")).getText()).contains("revoked");
        assertThat(browser.findElement(By.id("revoke-form")).isDisplayed()).as("no revoke of an ended lease").isFalse();
        assertThat(api.get("/v1/leases/" + buildId, reader("carol")).body().get("state").asString())
                .isEqualTo("revoked");

        // The key taken again: the story's table of the key's leases shows both, the newer token larger (the page
        // polls, so the new lease appears without a reload).
        Api.Response again = acquire(writer("carol"), "build-1", "builder", "ci-runner-4", 300);
        assertThat(again.status()).isEqualTo(201);
        wait.until(d -> d.findElements(By.cssSelector("#key-leases tbody tr")).size() == 2);
        List<String> tokens = browser.findElements(By.cssSelector("#key-leases tbody tr td:first-child")).stream()
                .map(WebElement::getText).toList();
        assertThat(tokens).containsExactly(again.body().get("fencingToken").asString(), String.valueOf(buildToken));
        assertThat(Long.parseLong(tokens.get(0))).isGreaterThan(Long.parseLong(tokens.get(1)));
        browser.executeScript("document.getElementById('timeline').scrollIntoView()");
        screenshot("revoked");

        // A narrow window still shows the story, its summary above its timeline.
        browser.manage().window().setSize(new Dimension(390, 844));
        wait.until(d -> (Boolean) browser.executeScript(
                "return document.documentElement.scrollWidth <= document.documentElement.clientWidth"));
        screenshot("narrow");

        assertThat(policyViolations()).as("Content-Security-Policy violations in the browser's console").isEmpty();
    }

    @Test
    void aReaderIsNotOfferedRevokeAndAProblemIsShownAsItsTitleAndDetail() {
        String leaseId = acquire(writer("alice"), "report", "reporter", "cron-1", 120).body().get("leaseId").asString();

        browser.get(console());
        browser.findElement(By.id("token")).sendKeys("not-a-token");
        browser.findElement(By.cssSelector("#token-form button[type=submit]")).click();
        WebElement problem = wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("problem")));
        assertThat(problem.getText()).isNotBlank();
        assertThat(browser.findElement(By.id("sign-in")).isDisplayed()).isTrue();

        browser.findElement(By.id("token")).clear();
        signIn(reader("dave"));
        assertThat(browser.findElement(By.id("problem")).isDisplayed()).isFalse();
        browser.findElement(By.cssSelector("button.open-lease[data-lease-id='" + leaseId + "']")).click();
        wait.until(d -> d.findElement(By.id("story-title")).getText().contains("report"));
        assertThat(browser.findElement(By.id("revoke-form")).isDisplayed()).isFalse();
        assertThat(browser.findElements(By.cssSelector("#revoke-form:not([hidden])"))).isEmpty();

        // A filter the API refuses: its problem's title and detail, as the API answered them.
        browser.findElement(By.id("back")).click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("leases")));
        browser.findElement(By.id("f-actor")).sendKeys("not an actor!");
        browser.findElement(By.id("apply")).click();
        WebElement refused = wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("problem")));
        Api.Response expected = api.get("/v1/leases?state=active&actor=not%20an%20actor!&limit=50", reader("dave"));
        assertThat(expected.status()).isEqualTo(400);
        assertThat(refused.getText()).contains(expected.body().get("title").asString())
                .contains(expected.body().get("detail").asString());
    }

    @Test
    void theListIsPagedFiftyAtATime() {
        for (int i = 0; i < 51; i++) {
            assertThat(acquire(writer("alice"), "paged-" + i, "job", "h", 120).status()).isEqualTo(201);
        }
        signIn(reader("dave"));
        assertThat(rows()).hasSize(50);
        assertThat(browser.findElement(By.id("lease-count")).getText()).isEqualTo("50 leases on this page.");
        assertThat(browser.findElement(By.id("first-page")).isDisplayed()).isFalse();
        browser.findElement(By.id("next-page")).click();
        wait.until(d -> rows().size() == 1);
        assertThat(rows().getFirst().getText()).contains("paged-0"); // the oldest, last of the newest-first list
        assertThat(browser.findElement(By.id("next-page")).isDisplayed()).isFalse();
        browser.findElement(By.id("first-page")).click();
        wait.until(d -> rows().size() == 50);
        assertThat(rows().getFirst().getText()).contains("paged-50");
    }

    @Test
    void theKeyboardAloneSignsInOpensALeaseAndComesBackToItsRowAndEveryFieldHasALabel() {
        String leaseId = acquire(writer("alice"), "keyboard", "job", "h-1", 120).body().get("leaseId").asString();
        String newer = acquire(writer("alice"), "newer", "job", "h-2", 120).body().get("leaseId").asString();
        browser.get(console());
        WebElement field = wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("token")));
        Object unlabelled = browser.executeScript("return [...document.querySelectorAll('input, select, textarea')]"
                + ".filter(e => e.labels.length === 0).map(e => e.id)");
        assertThat((List<?>) unlabelled).as("form fields without a label").isEmpty();

        field.sendKeys(reader("dave"));
        new Actions(browser).sendKeys(Keys.TAB).sendKeys(Keys.ENTER).perform(); // the textarea, then its button
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("leases")));
        wait.until(d -> "leases-title".equals(d.switchTo().activeElement().getAttribute("id")));
        // Tab goes through the filters, in the order they are read, then to the first lease.
        List<String> order = new java.util.ArrayList<>();
        for (int i = 0; i < 20 && focused().getAttribute("data-lease-id") == null; i++) {
            new Actions(browser).sendKeys(Keys.TAB).perform();
            order.add(focused().getAttribute("id"));
        }
        assertThat(order).startsWith("f-state", "f-program", "f-actor", "f-target-type", "f-target", "f-owner",
                "f-holder", "apply");
        assertThat(focused().getAttribute("data-lease-id")).isEqualTo(newer); // newest first
        new Actions(browser).sendKeys(Keys.TAB).perform();
        assertThat(focused().getAttribute("data-lease-id")).isEqualTo(leaseId);
        new Actions(browser).sendKeys(Keys.ENTER).perform();
        wait.until(d -> "story-title".equals(d.switchTo().activeElement().getAttribute("id")));
        assertThat(browser.findElement(By.id("story-title")).getText()).contains("keyboard");

        new Actions(browser).keyDown(Keys.SHIFT).sendKeys(Keys.TAB).keyUp(Keys.SHIFT).perform();
        assertThat(focused().getAttribute("id")).isEqualTo("back");
        new Actions(browser).sendKeys(Keys.ENTER).perform();
        wait.until(d -> leaseId.equals(d.switchTo().activeElement().getAttribute("data-lease-id")));
    }

    /** Issue 34: a key is its parts, decoded; a long one is cut, whole on hover and in the story. */
    @Test
    void keysAreShownDecodedAndALongOneIsCutWithTheOtherColumnsInSight() throws Exception {
        String value = "repo/main/" + "segment-".repeat(60);
        String holder = "ci-runner-" + "x".repeat(118);
        String owner = "svc-" + "y".repeat(60);
        Map<String, Object> body = new HashMap<>(Api.acquireBody(value, "indexer", holder, 300));
        body.put("program", "ci");
        body.put("operation", "deploy");
        Api.Response longKey = api.post("/v1/leases", writer(owner), body);
        assertThat(longKey.status()).isEqualTo(201);
        String canonical = longKey.body().get("key").asString();
        assertThat(canonical).contains("repo%2Fmain%2F");
        assertThat(acquire(writer("alice"), "short", "job", "h-1", 300).status()).isEqualTo(201);

        signIn(reader("dave"));
        WebElement row = browser.findElement(By.cssSelector("#lease-table tr[data-lease-id='"
                + longKey.body().get("leaseId").asString() + "']"));
        WebElement key = row.findElement(By.className("open-lease"));
        assertThat(key.getText()).startsWith("repo/main/segment-").doesNotContain("%2F")
                .contains("opaque · actor indexer · program ci · operation deploy");
        assertThat(key.getAttribute("title")).contains("Target opaque " + value).contains("Actor indexer")
                .contains("Program ci").contains("Operation deploy").contains("Canonical key " + canonical);
        assertThat((Boolean) browser.executeScript("const v = arguments[0].querySelector('.key-value');"
                + " return v.scrollWidth > v.clientWidth", key)).as("the key is cut").isTrue();
        WebElement holderCell = row.findElement(By.cssSelector("td.holder .cut"));
        assertThat(holderCell.getAttribute("title")).isEqualTo(holder);
        assertEveryColumnInSight();
        screenshot("keys");
        browser.manage().window().setSize(new Dimension(1024, 768));
        wait.until(d -> (Long) browser.executeScript("return document.documentElement.clientWidth") <= 1024);
        assertEveryColumnInSight();
        browser.manage().window().setSize(new Dimension(1280, 1000));

        key.click();
        wait.until(d -> d.findElement(By.id("story-title")).getText().contains(value));
        assertThat(browser.findElement(By.id("story-title")).getText()).contains("actor indexer").contains(holder);
        assertThat(browser.getTitle()).startsWith("opaque:" + value + " · " + holder);
        assertThat(browser.findElement(By.id("story-summary")).getText()).contains(canonical);
        browser.findElement(By.id("back")).click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("leases")));
        assertThat(browser.getTitle()).isEqualTo("Leasekeeper console");
    }

    /** The list needs no sideways scroll: its last column is inside the window. */
    private void assertEveryColumnInSight() {
        assertThat((Boolean) browser.executeScript("const box = document.querySelector('#leases .scroll');"
                + " return box.scrollWidth <= box.clientWidth")).as("the list fits its box").isTrue();
        Number right = (Number) browser.executeScript("return document.querySelector('#lease-table tbody tr"
                + " td:last-child').getBoundingClientRect().right");
        Number width = (Number) browser.executeScript("return document.documentElement.clientWidth");
        assertThat(right.doubleValue()).isLessThanOrEqualTo(width.doubleValue());
    }

    /** Issue 34: acquired and ended times in the list, in the viewer's zone, relative, exact on hover. */
    @Test
    void timesAreInTheViewersTimeZoneRelativeAndExactOnHover() {
        Api.Response ended = acquire(writer("alice"), "ended", "job", "h-1", 300);
        String endedId = ended.body().get("leaseId").asString();
        assertThat(release(writer("alice"), endedId, ended.body().get("fencingToken").asLong()).status())
                .isEqualTo(200);
        JsonNode endedLease = api.get("/v1/leases/" + endedId, reader("dave")).body();
        String activeId = acquire(writer("alice"), "active", "job", "h-2", 300).body().get("leaseId").asString();
        // A zone of half hours, west of UTC, whose name no browser spells otherwise.
        ZoneId zone = ZoneId.of("America/St_Johns");
        browser.executeCdpCommand("Emulation.setTimezoneOverride", Map.of("timezoneId", zone.getId()));

        signIn(reader("dave"));
        new Select(browser.findElement(By.id("f-state"))).selectByValue("any");
        browser.findElement(By.id("apply")).click();
        wait.until(d -> rows().size() == 2);
        String offset = offset(zone, Instant.parse(endedLease.get("serverTime").asString()));
        assertThat(browser.findElement(By.id("zone")).getText()).contains("America/St_Johns").contains(offset);
        WebElement row = browser.findElement(By.cssSelector("#lease-table tr[data-lease-id='" + endedId + "']"));
        for (String column : List.of("acquired", "ended")) {
            String instant = endedLease.get(column + "At").asString();
            WebElement time = row.findElement(By.cssSelector("td." + column + " time"));
            assertThat(time.getAttribute("datetime")).isEqualTo(instant);
            String at = time.findElement(By.className("at")).getText();
            String local = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(zone)
                    .format(Instant.parse(instant));
            assertThat(local).as("shown in the viewer's zone, the date when not today").endsWith(at);
            assertThat(time.findElement(By.className("ago")).getText()).matches("now|\\d+ s ago");
            assertThat(time.getAttribute("title")).contains(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS")
                    .withZone(zone).format(Instant.parse(instant)) + " " + offset(zone, Instant.parse(instant))
                    + " (America/St_Johns)")
                    .contains(instant + " (UTC)");
        }
        WebElement activeRow = browser.findElement(By.cssSelector("#lease-table tr[data-lease-id='" + activeId + "']"));
        assertThat(activeRow.findElement(By.cssSelector("td.ended")).getText()).isEqualTo("—");
        // The relative time moves on with the browser's monotonic clock, between two reads of the list.
        wait.until(d -> d.findElement(By.cssSelector("#lease-table tr[data-lease-id='" + endedId + "'] td.acquired"
                + " .ago")).getText().matches("[1-9]\\d* s ago"));

        activeRow.findElement(By.className("open-lease")).click();
        wait.until(d -> d.findElement(By.id("story-title")).getText().contains("active"));
        String local = "\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d " + Pattern.quote(offset);
        assertThat(browser.findElement(By.id("story-summary")).getText())
                .containsPattern("Expires at\\s+" + local + " \\(in \\d+ (s|min)\\)")
                .containsPattern("Acquired\\s+" + local + " \\((now|\\d+ s ago)\\)");
        assertThat(browser.findElement(By.id("timeline")).getText()).contains(offset);
    }

    /** "GMT-3:30", as the browser names a zone's offset at an instant. */
    private static String offset(ZoneId zone, Instant at) {
        int minutes = zone.getRules().getOffset(at).getTotalSeconds() / 60;
        return "GMT" + (minutes < 0 ? "-" : "+") + Math.abs(minutes) / 60
                + (minutes % 60 == 0 ? "" : ":" + String.format("%02d", Math.abs(minutes) % 60));
    }

    /**
     * Revision 1.2, "Keys that cannot deceive": a bidi control stored before the service refused it, and the
     * invisible characters it keeps, are shown as escapes wherever the console shows a key, a holder, an owner or a
     * reason.
     */
    @Test
    void invisibleCharactersAreShownAsEscapesWhereverAKeyHolderOwnerOrReasonIsShown() throws Exception {
        String leaseId = acquire(writer("alice"), "abcdef", "job", "pod-1", 300).body().get("leaseId").asString();
        // Stored as rows written before 1.2 may be: a right-to-left override in the target, invisible characters
        // in the holder and the owner.
        assertThat(jdbc.sql("UPDATE lease_key SET target_value = 'abc' || chr(8238) || 'def' WHERE tenant = :t")
                .param("t", tenant).update()).isEqualTo(1);
        assertThat(jdbc.sql("UPDATE lease SET holder = 'pod' || chr(8203) || '-1', owner = 'alice' || chr(8288)"
                + " WHERE tenant = :t").param("t", tenant).update()).isEqualTo(1);

        signIn(admin("root"));
        WebElement row = rows().getFirst();
        assertThat(row.getText()).contains("abc⟨U+202E⟩def").contains("pod⟨U+200B⟩-1").contains("alice⟨U+2060⟩");
        WebElement key = row.findElement(By.className("open-lease"));
        assertThat(key.getAttribute("title")).contains("Target opaque abc⟨U+202E⟩def")
                .contains("abc%E2%80%AEdef");
        assertThat(row.findElement(By.cssSelector("td.holder .cut")).getAttribute("title")).isEqualTo("pod⟨U+200B⟩-1");
        assertThat(row.findElement(By.cssSelector(".invisible")).getAttribute("title"))
                .isEqualTo("U+202E, an invisible character (right-to-left override)");
        assertThat(shownText()).doesNotContain("\u202E", "\u200B", "\u2060");

        key.click();
        wait.until(d -> d.findElement(By.id("story-title")).getText().contains("abc⟨U+202E⟩def"));
        assertThat(browser.findElement(By.id("story-title")).getText()).contains("pod⟨U+200B⟩-1");
        assertThat(browser.getTitle()).isEqualTo("opaque:abc⟨U+202E⟩def · pod⟨U+200B⟩-1 — Leasekeeper console");
        assertThat(browser.findElement(By.id("story-summary")).getText()).contains("alice⟨U+2060⟩");
        browser.findElement(By.id("revoke-reason")).sendKeys("spoofed\u200Bname");
        browser.findElement(By.id("revoke")).click();
        WebElement dialog = wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("confirm-revoke")));
        assertThat(dialog.getText()).contains("abc⟨U+202E⟩def").contains("pod⟨U+200B⟩-1").contains("alice⟨U+2060⟩");
        screenshot("invisible");
        browser.findElement(By.id("confirm-yes")).click();
        wait.until(d -> d.findElement(By.id("timeline")).getText().contains("spoofed⟨U+200B⟩name"));
        // The list's filter refuses the stored bidi control (revision 1.2): the story says so, and is told anyway.
        assertThat(browser.findElement(By.cssSelector("#key-leases tbody")).getText())
                .startsWith("The key's leases cannot be listed: target must not contain bidirectional");
        assertThat(shownText()).doesNotContain("\u202E", "\u200B", "\u2060");
        assertThat(api.get("/v1/leases/" + leaseId, reader("dave")).body().get("state").asString())
                .isEqualTo("revoked");
    }

    /** Issue 34: the page's icon, and the one browsers ask every origin for, answer without a token. */
    @Test
    void thePageHasAnIconServedWithoutAToken() {
        browser.get(console());
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("token")));
        String icon = browser.findElement(By.cssSelector("link[rel=icon]")).getAttribute("href");
        assertThat(icon).isEqualTo(console() + "favicon.svg");
        for (String path : List.of(icon, "/favicon.ico")) {
            Object answer = browser.executeAsyncScript("const done = arguments[arguments.length - 1];"
                    + " fetch(arguments[0]).then(r => done(r.status + ' ' + r.headers.get('Content-Type')))", path);
            assertThat(answer).as(path).isEqualTo("200 image/svg+xml");
        }
        assertThat(policyViolations()).isEmpty();
    }

    /** The text of the page as a person reads it. */
    private String shownText() {
        return (String) browser.executeScript("return document.body.innerText");
    }

    private WebElement focused() {
        return browser.switchTo().activeElement();
    }

    private String console() {
        return "http://127.0.0.1:" + port + "/console/";
    }

    private void signIn(String token) {
        if (!browser.getCurrentUrl().startsWith(console())) {
            browser.get(console());
        }
        WebElement field = wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("token")));
        field.sendKeys(token);
        browser.findElement(By.cssSelector("#token-form button[type=submit]")).click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("leases")));
        wait.until(d -> !d.findElement(By.id("lease-count")).getText().isEmpty());
    }

    /** The first row's countdown, as it reads now. */
    private String countdown() {
        return rows().getFirst().findElement(By.className("countdown")).getText();
    }

    private List<WebElement> rows() {
        return browser.findElements(By.cssSelector("#lease-table tbody tr"));
    }

    /** "12.3 s", "1 min 5 s": the seconds a countdown shows. */
    private static double seconds(String text) {
        if (text.endsWith(" s") && !text.contains("min")) {
            return Double.parseDouble(text.substring(0, text.length() - 2));
        }
        String[] parts = text.split(" ");
        return Integer.parseInt(parts[0]) * 60 + Integer.parseInt(parts[2]);
    }

    private void screenshot(String name) throws Exception {
        Files.createDirectories(SCREENSHOTS);
        Files.copy(browser.getScreenshotAs(OutputType.FILE).toPath(), SCREENSHOTS.resolve(name + ".png"),
                StandardCopyOption.REPLACE_EXISTING);
    }

    private List<String> policyViolations() {
        return browser.manage().logs().get(LogType.BROWSER).getAll().stream().map(LogEntry::getMessage)
                .filter(message -> message.contains("Content Security Policy")).toList();
    }
}
