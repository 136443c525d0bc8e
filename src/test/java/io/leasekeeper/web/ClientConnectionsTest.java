package io.leasekeeper.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletRequest;

/**
 * A waiting acquire asks the kernel whether its client has hung up; before a try that may grant it the key it asks
 * for the kernel's view as it is now, not as a snapshot of a moment ago showed it.
 */
class ClientConnectionsTest {

    @Test
    void aLookAsItIsNowSeesAHangUpAtOnce() throws Exception {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        try (ServerSocket server = new ServerSocket(0, 1, loopback);
             Socket client = new Socket()) {
            client.connect(new InetSocketAddress(loopback, server.getLocalPort()));
            try (Socket accepted = server.accept()) {
                MockHttpServletRequest request = new MockHttpServletRequest();
                request.setLocalAddr(loopback.getHostAddress());
                request.setLocalPort(server.getLocalPort());
                request.setRemoteAddr(loopback.getHostAddress());
                request.setRemotePort(client.getLocalPort());
                assertThat(ClientConnections.closedByClient(request, true)).as("connected").isFalse();

                client.close();
                // The end of the stream: the kernel has taken the client's FIN, so the socket is in CLOSE_WAIT.
                assertThat(accepted.getInputStream().read()).isEqualTo(-1);

                assertThat(ClientConnections.closedByClient(request, true)).as("hung up").isTrue();
            }
        }
    }
}
