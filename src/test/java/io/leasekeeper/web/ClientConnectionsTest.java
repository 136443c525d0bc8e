package io.leasekeeper.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.leasekeeper.support.Api;
import io.leasekeeper.support.IntegrationTest;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A waiting request looks at its client's connection with a non-blocking read into Tomcat's own buffer of it
 * ({@link ClientConnections}); the paths to that connection are Tomcat's internals, checked here on the Tomcat this
 * service ships with.
 */
class ClientConnectionsTest extends IntegrationTest {

    @Test
    void theConnectionOfARequestCanBeLookedAtOnThisTomcat() {
        assertThat(ClientConnections.available()).isTrue();
    }

    /**
     * A client that sends its next request while the first still waits (HTTP/1.1 pipelining) has not hung up, and
     * its next request is answered: the waiter's look, before it takes the key, reads those bytes into Tomcat's
     * buffer, where Tomcat finds them.
     */
    @Test
    void bytesOfAPipelinedRequestAreKeptForTomcat() throws Exception {
        Api.Response held = acquire(writer("alice"), "k", "job", "a", 60);
        String heldId = held.body().get("leaseId").asString();
        String waiting = """
                {"target":{"type":"opaque","value":"k"},"actor":"job","holder":"b","ttlSeconds":30,"waitSeconds":20}""";
        String pipelined = request("POST", "/v1/leases", writer("bob"), waiting, false)
                + request("GET", "/v1/leases/" + heldId, writer("bob"), null, true);
        try (Socket client = new Socket(InetAddress.getLoopbackAddress(), port)) {
            client.getOutputStream().write(pipelined.getBytes(StandardCharsets.UTF_8));
            client.getOutputStream().flush();
            awaitWaiters();

            assertThat(release(writer("alice"), heldId, held.body().get("fencingToken").asLong()).status())
                    .isEqualTo(200);

            client.setSoTimeout(10_000);
            String answers = readToEnd(client.getInputStream());
            Matcher statuses = Pattern.compile("HTTP/1.1 (\\d{3})").matcher(answers);
            assertThat(statuses.results().map(status -> status.group(1)).toList()).as(answers)
                    .containsExactly("201", "200");
        }
    }

    private static String request(String method, String path, String token, String body, boolean close) {
        byte[] bytes = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
        return method + " " + path + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + token + "\r\n"
                + (body == null ? "" : "Content-Type: application/json\r\n")
                + "Content-Length: " + bytes.length + "\r\n" + (close ? "Connection: close\r\n" : "") + "\r\n"
                + (body == null ? "" : body);
    }

    /** Until the waiting acquire's row is in its key's queue: its first try has committed. */
    private void awaitWaiters() {
        await().atMost(Duration.ofSeconds(10)).until(() -> queueRows() == 1);
    }

    private long queueRows() {
        return jdbc.sql("SELECT count(*) FROM lease_waiter WHERE tenant = :t").param("t", tenant).query(Long.class)
                .single();
    }

    private static String readToEnd(InputStream in) throws java.io.IOException {
        ByteArrayOutputStream read = new ByteArrayOutputStream();
        in.transferTo(read);
        return read.toString(StandardCharsets.UTF_8);
    }
}
