package io.leasekeeper.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.leasekeeper.support.IntegrationTest;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.apache.catalina.connector.Connector;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.tomcat.TomcatWebServer;
import org.springframework.boot.web.server.context.WebServerApplicationContext;

/**
 * Tomcat's bounds are the ones application.yml chose (docs/guides/operations.md, "Connections"), and they act: a
 * client that connects and sends half a request is disconnected after the 5 s connection timeout, instead of
 * holding one of the connections for Tomcat's default 20 s (or for ever, trickling a byte at a time).
 */
class ConnectionLimitsTest extends IntegrationTest {

    @Autowired
    WebServerApplicationContext context;

    @Test
    void theConnectorHasTheChosenBounds() {
        Connector connector = ((TomcatWebServer) context.getWebServer()).getTomcat().getConnector();
        assertThat(connector.getProperty("maxConnections")).isEqualTo(4096);
        assertThat(connector.getProperty("acceptCount")).isEqualTo(100);
        assertThat(connector.getProperty("connectionTimeout")).isEqualTo(5000);
        assertThat(connector.getProperty("keepAliveTimeout")).isEqualTo(30000);
        assertThat(connector.getProperty("maxKeepAliveRequests")).isEqualTo(10000);
        assertThat(connector.getProperty("maxSwallowSize")).isEqualTo(128 * 1024);
    }

    @Test
    void aClientThatSendsHalfARequestIsDisconnectedAfterTheConnectionTimeout() throws Exception {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(15_000); // Tomcat's default of 20 s would fail here
            socket.getOutputStream().write("GET /v1/leases HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
            long start = System.nanoTime();
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[4096];
            while (in.read(buffer) >= 0) {
                // Tomcat may answer 400 before it closes; read until it does.
            }
            long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
            assertThat(seconds).as("closed at the connection timeout").isBetween(4L, 14L);
        }
    }
}
