package io.leasekeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Contract revision 1.2, "Keys that cannot deceive", on the command line, run in-process against a scripted
 * service: a diagnostic shows the holder's invisible characters escaped, while standard output's JSON keeps them
 * as the service sent them, in UTF-8 even where standard output's own encoding is ASCII ({@code LANG=C}).
 */
class InvisibleCharactersTest {

    private static final String HOLDER = "pod\u200B-b\u202E";
    private static final String LEASE_HELD = """
            {"status": 409, "code": "LEASE_HELD", "title": "Lease held",
             "holder": {"owner": "bob\u200D", "holder": "pod\\u200B-b\\u202E", "expiresAt": "2026-12-05T00:00:30.000Z",
                        "remainingMs": 30000}}""";
    private static final String LEASE = """
            {"leaseId": "3f0c6f8e-0000-4000-8000-000000000001", "key": "t/default/opaque:k%E2%80%8B/a", "tenant": "t",
             "program": "default", "target": {"type": "opaque", "value": "k\u200B"}, "actor": "a", "operation": null,
             "owner": "o", "holder": "pod\u200B-é", "fencingToken": 7, "state": "active",
             "acquiredAt": "2026-12-05T00:00:00.000Z", "renewedAt": null, "expiresAt": "2026-12-05T00:00:30.000Z",
             "maxExpiresAt": "2026-12-06T00:00:00.000Z", "endedAt": null, "endReason": null, "ttlSeconds": 30,
             "maxLifetimeSeconds": 86400, "lockDelaySeconds": 0, "remainingMs": 30000,
             "serverTime": "2026-12-05T00:00:00.000Z", "jobId": null, "traceId": null, "metadata": {}}""";

    private StandardStreams streams;
    private ScriptedService service;

    @BeforeEach
    void captureStandardStreams() {
        streams = new StandardStreams(StandardCharsets.US_ASCII);
    }

    @AfterEach
    void restore() {
        streams.close();
        if (service != null) {
            service.close();
        }
    }

    @Test
    void theBusyLineShowsTheHoldersInvisibleCharactersEscaped(@TempDir Path dir) throws IOException {
        service = ScriptedService.answering(409, "application/problem+json", LEASE_HELD);

        int status = Leasekeeper.execute("run", "--url", service.url(), "--target", "opaque:k", "--actor", "a",
                "--holder", "h", "--", "touch", dir.resolve("ran").toString());

        assertThat(status).isEqualTo(Exit.BUSY);
        assertThat(streams.err()).startsWith("leasekeeper: the key is busy: 409 LEASE_HELD")
                .contains("owner bob\\u200D, holder pod\\u200B-b\\u202E, until")
                .doesNotContain(HOLDER).endsWith("\n").hasLineCount(1);
        assertThat(dir.resolve("ran")).doesNotExist();
    }

    @Test
    void standardOutputsJsonKeepsEveryCharacterInUtf8() throws IOException {
        service = ScriptedService.answering(200, "application/json", LEASE);

        int status = Leasekeeper.execute("inspect", "--url", service.url(), "--lease-id",
                "3f0c6f8e-0000-4000-8000-000000000001");

        assertThat(status).isZero();
        assertThat(streams.out()).contains("\"holder\":\"pod\u200B-é\"")
                .contains("\"value\":\"k\u200B\"").doesNotContain("?");
    }

}
