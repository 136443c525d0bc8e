package io.leasekeeper.web;

import com.github.benmanes.caffeine.cache.Ticker;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.web.filter.OncePerRequestFilter;
import tools.jackson.databind.json.JsonMapper;

/**
 * The bounds of a request body, enforced while the handler reads it, never by reading ahead: at most
 * {@link #MAX_BODY_BYTES} bytes (413 {@code REQUEST_TOO_LARGE}), and at most {@code leasekeeper.requests.body-timeout}
 * spent waiting for them (408 {@code REQUEST_REJECTED}; the time the body's reads block, so that time the service
 * spends itself, authenticating or queueing, is never charged to the sender). A declared length over the limit is
 * answered at once, from the header, as is a form body (415: the API takes JSON, and a form is parsed by Tomcat, not
 * through these bounds). Nothing here reads a byte: Spring Security runs after this filter on a request whose body
 * is still on the connection, and a request without a valid token is answered before anything reads it. What an
 * answer leaves unread is {@link UnreadBodies}'.
 *
 * <p>The stream passes every read straight through (no copy, no buffer), asking at most one byte past the limit of
 * the connection; a refusal is final (every later read throws it again) and reaches the client through
 * {@link ApiProblems}, as {@link BodyRefused}.
 */
public final class BodyLimit extends OncePerRequestFilter {

    public static final int MAX_BODY_BYTES = 64 * 1024;

    private final JsonMapper json;
    private final Duration timeout;
    private final Ticker ticker;

    /** @param ticker a monotonic clock in nanoseconds: {@link Ticker#systemTicker()} but in tests */
    public BodyLimit(JsonMapper json, Duration timeout, Ticker ticker) {
        this.json = json;
        this.timeout = timeout;
        this.ticker = ticker;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        long declared = request.getContentLengthLong();
        if (declared > MAX_BODY_BYTES) {
            refuse(response, BodyRefused.tooLarge().problem(request));
            return;
        }
        boolean body = declared > 0 || request.getHeader(HttpHeaders.TRANSFER_ENCODING) != null;
        if (body && isForm(request.getContentType())) {
            refuse(response, Problems.of(ErrorCode.UNSUPPORTED_MEDIA_TYPE,
                    "A form body is not read: request bodies are application/json.", request));
            return;
        }
        chain.doFilter(body ? new BoundedBody(request, timeout, ticker) : request, response);
    }

    /**
     * A form body is read by Tomcat itself when anything asks for the request's parameters (Spring MVC does, to read
     * a form POST's body), through its own stream, outside these bounds: up to 2 MB, at the sender's pace.
     */
    private static boolean isForm(String contentType) {
        return contentType != null
                && contentType.toLowerCase(Locale.ROOT).contains(MediaType.APPLICATION_FORM_URLENCODED_VALUE);
    }

    private void refuse(HttpServletResponse response, ProblemDetail problem) throws IOException {
        response.setStatus(problem.getStatus());
        response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
        response.setHeader(HttpHeaders.CONNECTION, "close");
        json.writeValue(response.getOutputStream(), problem);
    }

    /** The request with its body's stream bounded; everything else is the request's own. */
    static final class BoundedBody extends HttpServletRequestWrapper {
        private final Duration timeout;
        private final Ticker ticker;
        private BoundedStream stream;

        BoundedBody(HttpServletRequest request, Duration timeout, Ticker ticker) {
            super(request);
            this.timeout = timeout;
            this.ticker = ticker;
        }

        @Override
        public ServletInputStream getInputStream() throws IOException {
            if (stream == null) {
                stream = new BoundedStream(super.getInputStream(), timeout, ticker);
            }
            return stream;
        }

        @Override
        public BufferedReader getReader() throws IOException {
            String encoding = getCharacterEncoding();
            Charset charset = encoding == null ? StandardCharsets.UTF_8 : Charset.forName(encoding);
            return new BufferedReader(new InputStreamReader(getInputStream(), charset));
        }
    }

    /**
     * Counts the bytes read and the nanoseconds the reads blocked. Invariant: at most {@code MAX_BODY_BYTES + 1}
     * bytes are ever asked of the connection, and no read starts once a refusal is made.
     */
    private static final class BoundedStream extends ServletInputStream {
        private final ServletInputStream in;
        private final Duration timeout;
        private final long timeoutNanos;
        private final Ticker ticker;
        private long bytes;
        private long waitedNanos;
        private BodyRefused refused;

        BoundedStream(ServletInputStream in, Duration timeout, Ticker ticker) {
            this.in = in;
            this.timeout = timeout;
            this.timeoutNanos = timeout.toNanos();
            this.ticker = ticker;
        }

        @Override
        public int read() throws IOException {
            refuseAgain();
            long start = ticker.read();
            int b;
            try {
                b = in.read();
            } finally {
                waitedNanos += ticker.read() - start;
            }
            check(b < 0 ? -1 : 1);
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            refuseAgain();
            long start = ticker.read();
            int read;
            try {
                read = in.read(b, off, (int) Math.min(len, MAX_BODY_BYTES + 1L - bytes));
            } finally {
                waitedNanos += ticker.read() - start;
            }
            return check(read);
        }

        private void refuseAgain() throws BodyRefused {
            if (refused != null) {
                throw refused;
            }
        }

        private int check(int read) throws BodyRefused {
            if (read > 0) {
                bytes += read;
            }
            if (bytes > MAX_BODY_BYTES) {
                throw refused = BodyRefused.tooLarge();
            }
            if (waitedNanos > timeoutNanos) {
                throw refused = BodyRefused.tooSlow(timeout);
            }
            return read;
        }

        @Override
        public int available() throws IOException {
            return in.available();
        }

        @Override
        public boolean isFinished() {
            return in.isFinished();
        }

        @Override
        public boolean isReady() {
            return in.isReady();
        }

        @Override
        public void setReadListener(ReadListener listener) {
            in.setReadListener(listener);
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }
}
