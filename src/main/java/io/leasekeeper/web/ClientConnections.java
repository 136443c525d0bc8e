package io.leasekeeper.web;

import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

/**
 * Whether the client of a request has closed its connection, as the kernel sees it. The Servlet API tells
 * nothing of a client that went away until a write fails (and a small write to a closed connection does
 * not fail), so a waiting acquire asks Linux: the connection's socket is in CLOSE_WAIT once the peer has
 * sent its FIN. Read from {@code /proc/net/tcp} and {@code tcp6}; elsewhere, or when the socket is not
 * listed, the answer is "not known to be closed".
 *
 * <p>Reading those files walks the kernel's whole socket hash table: several milliseconds of CPU each time
 * on a large machine, whatever the number of sockets. So the sockets in CLOSE_WAIT are read in the
 * background, at most once every {@link #FRESH} and only while requests ask, and the snapshot is shared by
 * every waiter of the instance: a client that closed its connection is seen by the second check after the
 * next read. A check that must be current (a waiting acquire's, before a try that may grant it the key) reads the
 * tables on its own thread, unless a read began after it asked; requests asking at once share one read.
 */
public final class ClientConnections {

    private static final List<Path> TABLES = List.of(Path.of("/proc/net/tcp6"), Path.of("/proc/net/tcp"));
    private static final String CLOSE_WAIT = "08";
    static final Duration FRESH = Duration.ofMillis(250);

    private record Snapshot(long readAtNanos, Set<String> closeWait) {
    }

    private static volatile Snapshot snapshot = new Snapshot(System.nanoTime() - 2 * FRESH.toNanos(), Set.of());
    private static final AtomicBoolean reading = new AtomicBoolean();

    private ClientConnections() {
    }

    /**
     * True when the kernel showed the request's connection closed by the client (CLOSE_WAIT): lately, or
     * {@code now}, in a read that began after this call.
     */
    public static boolean closedByClient(HttpServletRequest request, boolean now) {
        try {
            Set<String> closeWait = now ? closeWaitNow(System.nanoTime()) : closeWait();
            return closeWait.contains(address(request.getLocalAddr(), request.getLocalPort()) + " "
                    + address(request.getRemoteAddr(), request.getRemotePort()))
                    || closeWait.contains(address6(request.getLocalAddr(), request.getLocalPort()) + " "
                    + address6(request.getRemoteAddr(), request.getRemotePort()));
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /**
     * The sockets in CLOSE_WAIT as "local remote" in the tables' notation, as last read. A snapshot older than
     * {@link #FRESH} is read again in the background, never on the asking request's thread: a waiter that
     * was just handed a key answers without waiting for the kernel's tables.
     */
    private static Set<String> closeWait() {
        Snapshot last = snapshot;
        if (System.nanoTime() - last.readAtNanos() >= FRESH.toNanos() && reading.compareAndSet(false, true)) {
            Thread.ofVirtual().name("client-connections").start(() -> {
                try {
                    snapshot = new Snapshot(System.nanoTime(), read());
                } finally {
                    reading.set(false);
                }
            });
        }
        return last.closeWait();
    }

    /** The sockets in CLOSE_WAIT as read by a read that began at or after {@code askedAtNanos}. */
    private static synchronized Set<String> closeWaitNow(long askedAtNanos) {
        Snapshot last = snapshot;
        if (last.readAtNanos() - askedAtNanos >= 0) {
            return last.closeWait(); // another request's read began since this one asked
        }
        Snapshot now = new Snapshot(System.nanoTime(), read());
        snapshot = now;
        return now.closeWait();
    }

    private static Set<String> read() {
        Set<String> closeWait = new HashSet<>();
        for (Path table : TABLES) {
            if (!Files.isReadable(table)) {
                continue;
            }
            try (Stream<String> lines = Files.lines(table)) {
                lines.skip(1).forEach(line -> {
                    String[] fields = line.trim().split("\\s+", 5);
                    if (fields.length > 3 && CLOSE_WAIT.equals(fields[3])) {
                        closeWait.add(fields[1] + " " + fields[2]);
                    }
                });
            } catch (IOException | UncheckedIOException e) {
                // unreadable now: nothing known to be closed
            }
        }
        return Set.copyOf(closeWait);
    }

    /** An IPv4 socket address as /proc/net/tcp writes it: the address's 32-bit word in host (little-endian) order. */
    static String address(String ip, int port) throws UnknownHostException {
        byte[] bytes = InetAddress.getByName(ip).getAddress();
        if (bytes.length != 4) {
            return "";
        }
        return words(bytes) + ":" + String.format("%04X", port);
    }

    /** The same in /proc/net/tcp6: four 32-bit words; an IPv4 peer appears as ::ffff:a.b.c.d. */
    static String address6(String ip, int port) throws UnknownHostException {
        byte[] bytes = InetAddress.getByName(ip).getAddress();
        if (bytes.length == 4) {
            byte[] mapped = new byte[16];
            mapped[10] = (byte) 0xff;
            mapped[11] = (byte) 0xff;
            System.arraycopy(bytes, 0, mapped, 12, 4);
            bytes = mapped;
        }
        return words(bytes) + ":" + String.format("%04X", port);
    }

    private static String words(byte[] bytes) {
        StringBuilder hex = new StringBuilder();
        HexFormat format = HexFormat.of().withUpperCase();
        for (int word = 0; word < bytes.length; word += 4) {
            for (int i = 3; i >= 0; i--) {
                hex.append(format.toHexDigits(bytes[word + i]));
            }
        }
        return hex.toString();
    }
}
