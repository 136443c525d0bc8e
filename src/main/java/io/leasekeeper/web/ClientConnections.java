package io.leasekeeper.web;

import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

/**
 * Whether the client of a request has closed its connection, as the kernel sees it. The Servlet API tells
 * nothing of a client that went away until a write fails (and a small write to a closed connection does
 * not fail), so a waiting acquire asks Linux: the connection's socket is in CLOSE_WAIT once the peer has
 * sent its FIN. Read from {@code /proc/net/tcp} and {@code tcp6}; elsewhere, or when the socket is not
 * found, the answer is "not known to be closed".
 */
public final class ClientConnections {

    private static final List<Path> TABLES = List.of(Path.of("/proc/net/tcp"), Path.of("/proc/net/tcp6"));
    private static final String CLOSE_WAIT = "08";

    private ClientConnections() {
    }

    /** True when the kernel shows the request's connection closed by the client (CLOSE_WAIT). */
    public static boolean closedByClient(HttpServletRequest request) {
        try {
            String local = address(request.getLocalAddr(), request.getLocalPort());
            String remote = address(request.getRemoteAddr(), request.getRemotePort());
            String local6 = address6(request.getLocalAddr(), request.getLocalPort());
            String remote6 = address6(request.getRemoteAddr(), request.getRemotePort());
            for (Path table : TABLES) {
                if (!Files.isReadable(table)) {
                    continue;
                }
                try (Stream<String> lines = Files.lines(table)) {
                    String state = lines.skip(1).map(String::trim).map(l -> l.split("\\s+"))
                            .filter(f -> f.length > 3 && (f[1].equals(local) && f[2].equals(remote)
                                    || f[1].equals(local6) && f[2].equals(remote6)))
                            .map(f -> f[3]).findFirst().orElse(null);
                    if (state != null) {
                        return CLOSE_WAIT.equals(state);
                    }
                }
            }
            return false;
        } catch (IOException | UncheckedIOException e) {
            return false;
        }
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
