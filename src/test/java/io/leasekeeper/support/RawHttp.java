package io.leasekeeper.support;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * HTTP/1.1 written as bytes on a socket, for the requests no HTTP client sends: header values with control
 * characters, unknown methods and transfer codings, malformed escapes, more parameters than the container takes,
 * bodies that are not UTF-8. Every request asks the server to close the connection.
 */
public final class RawHttp {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** An answer as it came: its status, its headers (names lowercased, the last of each), its body unchunked. */
    public record Answer(int status, Map<String, String> headers, String body) {

        public String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        /** The body as JSON, or an empty object when it is none. */
        public JsonNode json() {
            try {
                return body.isBlank() ? JSON.createObjectNode() : JSON.readTree(body);
            } catch (JacksonException e) {
                return JSON.createObjectNode();
            }
        }

        public String code() {
            return json().path("code").asString(null);
        }

        /** {@code application/problem+json} with a code of the contract's form and the answer's own status. */
        public boolean isProblem() {
            String type = header("Content-Type");
            return type != null && type.startsWith("application/problem+json") && code() != null
                    && code().matches("[A-Z_]+") && json().path("status").asInt() == status;
        }
    }

    private RawHttp() {
    }

    /** A request: its line, Host, Connection: close, the given header lines and, with a body, its Content-Length. */
    public static byte[] request(String method, String target, List<String> headers, byte[] body) {
        StringBuilder head = new StringBuilder(method).append(' ').append(target).append(" HTTP/1.1\r\n")
                .append("Host: localhost\r\nConnection: close\r\n");
        headers.forEach(h -> head.append(h).append("\r\n"));
        if (body != null) {
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        byte[] start = head.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
        ByteArrayOutputStream request = new ByteArrayOutputStream();
        request.writeBytes(start);
        if (body != null) {
            request.writeBytes(body);
        }
        return request.toByteArray();
    }

    public static byte[] request(String method, String target, List<String> headers, String body) {
        return request(method, target, headers, body == null ? null : body.getBytes(StandardCharsets.UTF_8));
    }

    /** Bytes written as given (header text as ISO-8859-1, one byte per character). */
    public static Answer send(int port, String request) {
        return send(port, request.getBytes(StandardCharsets.ISO_8859_1));
    }

    /**
     * Sends the bytes and reads one answer, by its own framing: the server may keep the connection open even so (a
     * header line that folds into {@code Connection: close} changes its value).
     */
    public static Answer send(int port, byte[] request) {
        boolean head = new String(request, 0, Math.min(5, request.length), StandardCharsets.ISO_8859_1).equals("HEAD ");
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(30_000);
            socket.getOutputStream().write(request);
            socket.getOutputStream().flush();
            return read(new BufferedInputStream(socket.getInputStream()), head);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The final answer: an interim one (100 Continue) is skipped. */
    private static Answer read(InputStream in, boolean head) throws IOException {
        String statusLine = line(in);
        if (!statusLine.startsWith("HTTP/1.1 ")) {
            throw new IOException("not an HTTP/1.1 answer: " + statusLine);
        }
        int status = Integer.parseInt(statusLine.substring(9, 12));
        Map<String, String> headers = new LinkedHashMap<>();
        for (String header = line(in); !header.isEmpty(); header = line(in)) {
            int colon = header.indexOf(':');
            headers.put(header.substring(0, colon).trim().toLowerCase(Locale.ROOT), header.substring(colon + 1).trim());
        }
        if (status < 200) {
            return read(in, head);
        }
        byte[] body;
        if (head || status == 204 || status == 304) {
            body = new byte[0];
        } else if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
            body = unchunk(in);
        } else if (headers.containsKey("content-length")) {
            body = in.readNBytes(Integer.parseInt(headers.get("content-length")));
        } else {
            body = in.readAllBytes();
        }
        return new Answer(status, headers, new String(body, StandardCharsets.UTF_8));
    }

    private static byte[] unchunk(InputStream in) throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        for (int size = Integer.parseInt(line(in).split(";")[0].trim(), 16); size > 0;
                size = Integer.parseInt(line(in).split(";")[0].trim(), 16)) {
            body.writeBytes(in.readNBytes(size));
            line(in);
        }
        while (!line(in).isEmpty()) {
            // trailer fields
        }
        return body.toByteArray();
    }

    /** A line without its CRLF; the end of the stream ends it too. */
    private static String line(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        for (int c = in.read(); c >= 0 && c != '\n'; c = in.read()) {
            if (c != '\r') {
                line.append((char) c);
            }
        }
        return line.toString();
    }
}
