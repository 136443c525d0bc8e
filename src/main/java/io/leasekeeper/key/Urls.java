package io.leasekeeper.key;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Locale;
import java.util.Map;

/**
 * URLs in one spelling each (RFC 3986 section 6 normalization): scheme and host lowercased, the host
 * normalized as a host or IP target, a default port dropped, an empty path made "/", dot-segments
 * removed, percent-encoding normalized (uppercase hex, unreserved characters decoded, other characters
 * encoded as UTF-8), the fragment dropped and the query kept as sent. User info is refused: credentials
 * never go into a key. {@link URI} splits the reference; the normalization steps are RFC 3986's.
 */
final class Urls {

    private static final Map<String, Integer> DEFAULT_PORTS =
            Map.of("http", 80, "https", 443, "ws", 80, "wss", 443, "ftp", 21);
    private static final String HEX = "0123456789ABCDEF";

    private Urls() {
    }

    static String normalize(String raw) {
        URI uri;
        try {
            uri = new URI(raw.strip());
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("is not a valid URL");
        }
        if (uri.getScheme() == null || uri.getRawAuthority() == null || uri.isOpaque()) {
            throw new IllegalArgumentException("must be an absolute URL with a host (scheme://host/...)");
        }
        String scheme = uri.getScheme().toLowerCase(Locale.ROOT);
        String authority = uri.getRawAuthority();
        if (authority.contains("@")) {
            throw new IllegalArgumentException("must not contain user info");
        }
        String hostPart = authority;
        String port = null;
        int close = authority.lastIndexOf(']');
        int colon = authority.lastIndexOf(':');
        if (colon > close) {
            hostPart = authority.substring(0, colon);
            port = authority.substring(colon + 1);
        }
        String host = normalizeHost(percentDecodeHost(hostPart));
        String portPart = "";
        if (port != null && !port.isEmpty()) {
            if (!port.chars().allMatch(c -> c >= '0' && c <= '9') || port.length() > 5
                    || Integer.parseInt(port) > 65535) {
                throw new IllegalArgumentException("has an invalid port");
            }
            int number = Integer.parseInt(port);
            if (!Integer.valueOf(number).equals(DEFAULT_PORTS.get(scheme))) {
                portPart = ":" + number;
            }
        }
        String path = removeDotSegments(normalizePercentEncoding(uri.getRawPath()));
        if (path.isEmpty()) {
            path = "/";
        }
        String query = uri.getRawQuery();
        return scheme + "://" + host + portPart + path + (query == null ? "" : "?" + query);
    }

    private static String normalizeHost(String host) {
        if (host.startsWith("[")) {
            if (!host.endsWith("]")) {
                throw new IllegalArgumentException("has an invalid IPv6 host");
            }
            String ip = IpAddresses.normalize(host);
            return ip.contains(":") ? "[" + ip + "]" : ip;
        }
        if (IpAddresses.looksLikeIp(host)) {
            return IpAddresses.normalize(host);
        }
        return HostNames.normalize(host);
    }

    private static String percentDecodeHost(String host) {
        return host.contains("%") && !host.startsWith("[") ? decodeAll(host) : host;
    }

    /** Decodes %XX of unreserved characters, uppercases other escapes, encodes what may not stand bare. */
    static String normalizePercentEncoding(String path) {
        if (path == null) {
            return "";
        }
        StringBuilder out = new StringBuilder(path.length());
        byte[] bytes = path.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < bytes.length; i++) {
            int b = bytes[i] & 0xFF;
            if (b == '%') {
                if (i + 2 >= bytes.length || hex(bytes[i + 1]) < 0 || hex(bytes[i + 2]) < 0) {
                    throw new IllegalArgumentException("has an invalid percent-encoding");
                }
                int decoded = hex(bytes[i + 1]) * 16 + hex(bytes[i + 2]);
                i += 2;
                if (unreserved(decoded)) {
                    out.append((char) decoded);
                } else {
                    appendEscaped(out, decoded);
                }
            } else if (unreserved(b) || "!$&'()*+,;=:@/".indexOf(b) >= 0) {
                out.append((char) b);
            } else {
                appendEscaped(out, b);
            }
        }
        return out.toString();
    }

    /** RFC 3986 section 5.2.4. */
    static String removeDotSegments(String path) {
        if (!path.contains(".")) {
            return path;
        }
        Deque<String> output = new ArrayDeque<>();
        String[] segments = path.split("/", -1);
        for (int i = 0; i < segments.length; i++) {
            String segment = segments[i];
            boolean last = i == segments.length - 1;
            if (segment.equals(".") || segment.equals("..")) {
                if (segment.equals("..") && output.size() > 1) {
                    output.removeLast();
                }
                if (last) {
                    output.addLast("");
                }
            } else {
                output.addLast(segment);
            }
        }
        String joined = String.join("/", output);
        return path.startsWith("/") && !joined.startsWith("/") ? "/" + joined : joined;
    }

    private static String decodeAll(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == '%' && i + 2 < bytes.length && hex(bytes[i + 1]) >= 0 && hex(bytes[i + 2]) >= 0) {
                out.write(hex(bytes[i + 1]) * 16 + hex(bytes[i + 2]));
                i += 2;
            } else if (bytes[i] == '%') {
                throw new IllegalArgumentException("has an invalid percent-encoding");
            } else {
                out.write(bytes[i]);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private static boolean unreserved(int c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                || c == '-' || c == '.' || c == '_' || c == '~';
    }

    private static void appendEscaped(StringBuilder out, int b) {
        out.append('%').append(HEX.charAt(b >> 4)).append(HEX.charAt(b & 0xF));
    }

    private static int hex(byte b) {
        return Character.digit((char) b, 16);
    }
}
