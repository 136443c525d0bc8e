package io.leasekeeper.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * A TCP proxy on loopback in front of PostgreSQL that a test can cut (every open connection closed,
 * new ones refused at once), stall (connections stay open but nothing gets through, as with a
 * partitioned or frozen server) and restore: a database outage on demand, with no timing involved.
 */
public final class CuttableProxy implements AutoCloseable {

    private final ServerSocket server;
    private final String targetHost;
    private final int targetPort;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile boolean cut;
    private volatile boolean dropResponses;
    private volatile boolean stalled;

    public CuttableProxy(String targetHost, int targetPort) {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        try {
            this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Thread.ofVirtual().name("proxy-accept").start(this::acceptLoop);
    }

    /**
     * A proxy in front of the test database, and the service's datasource pointed through it, for a
     * Spring test's {@code @DynamicPropertySource}.
     */
    public static CuttableProxy inFrontOfTheTestDatabase(DynamicPropertyRegistry registry) {
        return inFrontOf(TestDatabase.connection().url(), registry);
    }

    /** The same in front of another database of the test cluster ({@link TestDatabase#newDatabase}). */
    public static CuttableProxy inFrontOf(String url, DynamicPropertyRegistry registry) {
        TestDatabase.Connection db = TestDatabase.connection();
        URI target = URI.create(url.substring("jdbc:".length()));
        CuttableProxy proxy = new CuttableProxy(target.getHost(), target.getPort());
        String viaProxy = url.replaceFirst("//[^/]+/", "//127.0.0.1:" + proxy.port() + "/");
        registry.add("spring.datasource.url", () -> viaProxy);
        registry.add("spring.datasource.username", db::username);
        registry.add("spring.datasource.password", db::password);
        return proxy;
    }

    public int port() {
        return server.getLocalPort();
    }

    /** Closes every proxied connection and refuses new ones until {@link #restore()}. */
    public void cut() {
        cut = true;
        for (Socket socket : open) {
            closeQuietly(socket);
        }
        open.clear();
    }

    /**
     * Nothing gets through either way until {@link #restore()}: bytes are swallowed, new connections are
     * accepted and never answered. The peer sees a silent server, not a closed connection.
     */
    public void stall() {
        stalled = true;
    }

    /** Ends a cut or a stall; connections that a stall left mid-conversation are closed. */
    public void restore() {
        if (stalled) {
            for (Socket socket : open) {
                closeQuietly(socket);
            }
            open.clear();
            stalled = false;
        }
        cut = false;
    }

    /**
     * While on, the upstream's answer is never delivered: the connection is closed as soon as the answer
     * starts, after the server did (and committed) the work. The client sees a broken connection.
     */
    public void dropResponses(boolean on) {
        dropResponses = on;
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return;
            }
            if (cut) {
                closeQuietly(client);
                continue;
            }
            if (stalled) {
                open.add(client);
                swallow(client);
                continue;
            }
            try {
                Socket upstream = new Socket(targetHost, targetPort);
                open.add(client);
                open.add(upstream);
                pump(client, upstream, false);
                pump(upstream, client, true);
            } catch (IOException e) {
                closeQuietly(client);
            }
        }
    }

    private void pump(Socket from, Socket to, boolean response) {
        Thread.ofVirtual().start(() -> {
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                byte[] buffer = new byte[8192];
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    if (stalled) {
                        continue; // swallowed
                    }
                    if (response && dropResponses) {
                        break; // the answer exists, so the work is done: drop it and hang up
                    }
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // one side closed: close the other below
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
            }
        });
    }

    private void swallow(Socket client) {
        Thread.ofVirtual().start(() -> {
            try (InputStream in = client.getInputStream()) {
                in.transferTo(OutputStream.nullOutputStream());
            } catch (IOException e) {
                // closed by restore()
            } finally {
                open.remove(client);
            }
        });
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        cut();
        server.close();
    }
}
