package io.leasekeeper.web;

import com.github.benmanes.caffeine.cache.Ticker;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ValveBase;
import org.apache.coyote.ActionCode;
import org.apache.coyote.http11.AbstractHttp11Protocol;
import org.apache.tomcat.util.net.ApplicationBufferHandler;

/**
 * What an answer leaves of its request's body unread: the body of a request refused before its handler read it (401,
 * 403, 404, a declared length over the limit) or part-way ({@link BodyRefused}). Tomcat alone would read that rest
 * after the answer, up to {@code server.tomcat.max-swallow-size}, for as long as the sender keeps sending a byte
 * within each {@code server.tomcat.connection-timeout}: an unauthenticated sender could hold a connection for days.
 *
 * <p>Here, in the engine's pipeline (outside the host's valves, so after the error report is written), the answer is
 * sent whole first; then the rest is read and dropped (Tomcat's own buffer, nothing copied) while it keeps the service
 * waiting at most {@code leasekeeper.requests.body-timeout} in all and fits {@code max-swallow-size}, so that a client
 * still sending its body gets its answer rather than a reset, and keeps its connection. Otherwise, and at once after
 * a 408 (the sender was already too slow) or for a client waiting for {@code 100 Continue}, the connection is closed
 * without reading more. An asynchronous request is left alone: its answer is not made yet.
 */
final class UnreadBodies extends ValveBase {

    private final long timeoutNanos;
    private final Ticker ticker;

    /** @param ticker a monotonic clock in nanoseconds: {@link Ticker#systemTicker()} but in tests */
    UnreadBodies(Duration timeout, Ticker ticker) {
        super(true);
        this.timeoutNanos = timeout.toNanos();
        this.ticker = ticker;
    }

    @Override
    public void invoke(Request request, Response response) throws IOException, ServletException {
        getNext().invoke(request, response);
        org.apache.coyote.Request exchange = request.getCoyoteRequest();
        if (request.isAsync() || exchange.isFinished()) {
            return;
        }
        try {
            response.finishResponse();
            if (response.getStatus() != HttpServletResponse.SC_REQUEST_TIMEOUT && !exchange.hasExpectation()
                    && dropped(exchange, maxSwallowSize(request))) {
                return;
            }
        } catch (IOException gone) {
            // The client is gone, or the rest of its body is malformed: nothing more to read from it.
        }
        exchange.action(ActionCode.DISABLE_SWALLOW_INPUT, null);
    }

    /** Reads the rest of the body into nothing: true when it ended within the bounds. */
    private boolean dropped(org.apache.coyote.Request exchange, long maxBytes) throws IOException {
        long declared = exchange.getContentLengthLong();
        if (declared >= 0 && declared - exchange.getBytesRead() > maxBytes) {
            return false;
        }
        Dropped dropped = new Dropped();
        long bytes = 0;
        long waitedNanos = 0;
        while (true) {
            long start = ticker.read();
            int read;
            try {
                read = exchange.doRead(dropped);
            } finally {
                waitedNanos += ticker.read() - start;
            }
            if (read < 0) {
                return true;
            }
            bytes += read;
            if (bytes > maxBytes || waitedNanos > timeoutNanos) {
                return false;
            }
        }
    }

    private static long maxSwallowSize(Request request) {
        long max = request.getConnector().getProtocolHandler() instanceof AbstractHttp11Protocol<?> http
                ? http.getMaxSwallowSize() : 0;
        return max < 0 ? Long.MAX_VALUE : max;
    }

    /** Where Tomcat puts the bytes it read: a view of its own buffer, dropped. */
    private static final class Dropped implements ApplicationBufferHandler {
        private ByteBuffer buffer = EMPTY_BUFFER;

        @Override
        public void setByteBuffer(ByteBuffer buffer) {
            this.buffer = buffer;
        }

        @Override
        public ByteBuffer getByteBuffer() {
            return buffer;
        }

        @Override
        public void expand(int size) {
            // Tomcat's buffer is read in place; nothing to grow.
        }
    }
}
