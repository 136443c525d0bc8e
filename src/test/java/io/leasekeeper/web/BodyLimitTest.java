package io.leasekeeper.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.benmanes.caffeine.cache.Ticker;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletRequest;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@link BodyLimit} reads nothing itself: what it passes on is the request with its body still unread, and every
 * byte the handler reads is one taken from the connection then, never ahead of it, never kept. Each read counts
 * against the limit and its wait against the timeout.
 */
class BodyLimitTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final AtomicLong now = new AtomicLong();
    private final Ticker ticker = now::get;
    private final BodyLimit limit = new BodyLimit(JsonMapper.builder().build(), TIMEOUT, ticker);

    @Test
    void aChunkedBodyIsPassedOnUnreadAndEachReadTakesFromTheConnectionOnlyWhatItAsks() throws Exception {
        Connection connection = new Connection(new byte[100_000]);
        MockHttpServletRequest request = chunked(connection);
        long[] takenWhenPassedOn = {-1};
        ServletRequest[] passedOn = {null};

        limit.doFilter(request, new MockHttpServletResponse(), (req, res) -> {
            takenWhenPassedOn[0] = connection.taken;
            passedOn[0] = req;
        });

        assertThat(takenWhenPassedOn[0]).as("bytes taken before the chain (security, the handler) ran").isZero();
        InputStream body = passedOn[0].getInputStream();
        byte[] buffer = new byte[10];
        assertThat(body.read(buffer)).isEqualTo(10);
        assertThat(connection.taken).as("nothing read ahead, nothing kept").isEqualTo(10);
        assertThat(body.read()).isZero();
        assertThat(connection.taken).isEqualTo(11);
    }

    @Test
    void aChunkedBodyIsRefusedAtTheFirstBytePastTheLimitHavingTakenNoMore() throws Exception {
        Connection connection = new Connection(new byte[BodyLimit.MAX_BODY_BYTES + 50_000]);
        InputStream body = passedOn(chunked(connection)).getInputStream();

        assertThatThrownBy(body::readAllBytes).isInstanceOfSatisfying(BodyRefused.class, refused -> {
            assertThat(refused.status().value()).isEqualTo(413);
            assertThat(refused.problem(new MockHttpServletRequest()).getProperties())
                    .containsEntry("code", "REQUEST_TOO_LARGE");
        });
        assertThat(connection.taken).isEqualTo(BodyLimit.MAX_BODY_BYTES + 1);
        assertThatThrownBy(body::read).as("a refusal is final").isInstanceOf(BodyRefused.class);
        assertThat(connection.taken).isEqualTo(BodyLimit.MAX_BODY_BYTES + 1);
    }

    @Test
    void aChunkedBodyOfExactlyTheLimitIsReadWhole() throws Exception {
        Connection connection = new Connection(new byte[BodyLimit.MAX_BODY_BYTES]);
        assertThat(passedOn(chunked(connection)).getInputStream().readAllBytes()).hasSize(BodyLimit.MAX_BODY_BYTES);
    }

    @Test
    void aDeclaredLengthOverTheLimitIsAnsweredFromTheHeaderAlone() throws Exception {
        Connection connection = new Connection(new byte[BodyLimit.MAX_BODY_BYTES + 1]);
        MockHttpServletResponse response = answeredWithoutTheChain(
                withConnection(connection, BodyLimit.MAX_BODY_BYTES + 1, "application/json"));

        assertThat(connection.taken).isZero();
        assertThat(response.getStatus()).isEqualTo(413);
        assertThat(response.getHeader("Connection")).isEqualTo("close");
        assertThat(response.getContentAsString()).contains("\"code\":\"REQUEST_TOO_LARGE\"");
    }

    @Test
    void aFormBodyIsAnswered415FromTheHeaderAlone() throws Exception {
        String form = "application/x-www-form-urlencoded";
        for (MockHttpServletRequest request : List.of(withConnection(new Connection(new byte[10]), 10, form),
                chunked(withConnection(new Connection(new byte[10]), -1, "Application/X-WWW-Form-Urlencoded; q=1")))) {
            MockHttpServletResponse response = answeredWithoutTheChain(request);
            assertThat(((Connection) request.getInputStream()).taken).isZero();
            assertThat(response.getStatus()).isEqualTo(415);
            assertThat(response.getContentAsString()).contains("\"code\":\"UNSUPPORTED_MEDIA_TYPE\"");
        }
    }

    private MockHttpServletResponse answeredWithoutTheChain(MockHttpServletRequest request) throws Exception {
        MockHttpServletResponse response = new MockHttpServletResponse();
        boolean[] chainRan = {false};
        limit.doFilter(request, response, (req, res) -> chainRan[0] = true);
        assertThat(chainRan[0]).isFalse();
        return response;
    }

    /**
     * The sender is charged the time the reads wait for its bytes, in all: not the time between them (the
     * service's own work, authenticating, queueing). Three reads waiting 0.4 of the timeout each: the third is
     * refused, 408.
     */
    @Test
    void readsThatWaitLongerThanTheTimeoutInAllAreRefused408() throws Exception {
        Duration wait = TIMEOUT.multipliedBy(2).dividedBy(5);
        Connection connection = new Connection(new byte[100]) {
            @Override
            int take(int wanted) {
                now.addAndGet(wait.toNanos());
                return super.take(Math.min(wanted, 1));
            }
        };
        InputStream body = passedOn(chunked(connection)).getInputStream();
        now.addAndGet(TIMEOUT.multipliedBy(10).toNanos()); // the service's own time: not charged
        assertThat(body.read()).isZero();
        now.addAndGet(TIMEOUT.multipliedBy(10).toNanos());
        assertThat(body.read(new byte[5])).isEqualTo(1);

        assertThatThrownBy(body::read).isInstanceOfSatisfying(BodyRefused.class, refused -> {
            assertThat(refused.status().value()).isEqualTo(408);
            assertThat(refused.problem(new MockHttpServletRequest()).getProperties())
                    .containsEntry("code", "REQUEST_REJECTED");
        });
        assertThatThrownBy(body::read).as("a refusal is final").isInstanceOf(BodyRefused.class);
        assertThat(connection.taken).isEqualTo(3);
    }

    @Test
    void aRequestWithoutABodyIsPassedOnAsItIs() throws Exception {
        MockHttpServletRequest request = new MockHttpServletRequest("GET", "/v1/leases");
        assertThat(passedOn(request)).isSameAs(request);
    }

    private ServletRequest passedOn(MockHttpServletRequest request) throws Exception {
        ServletRequest[] passedOn = {null};
        limit.doFilter(request, new MockHttpServletResponse(), (req, res) -> passedOn[0] = req);
        return passedOn[0];
    }

    private static MockHttpServletRequest chunked(Connection connection) {
        return chunked(withConnection(connection, -1, "application/json"));
    }

    private static MockHttpServletRequest chunked(MockHttpServletRequest request) {
        request.addHeader("Transfer-Encoding", "chunked");
        return request;
    }

    /** A POST whose body is {@code connection}; {@code declared}: its Content-Length, or -1 for none. */
    private static MockHttpServletRequest withConnection(Connection connection, long declared, String contentType) {
        MockHttpServletRequest request = new MockHttpServletRequest("POST", "/v1/leases") {
            @Override
            public ServletInputStream getInputStream() {
                return connection;
            }

            @Override
            public long getContentLengthLong() {
                return declared;
            }
        };
        request.setContentType(contentType);
        return request;
    }

    /** A request's body as the container gives it, counting the bytes taken from it. */
    private static class Connection extends ServletInputStream {
        private final ByteArrayInputStream bytes;
        long taken;

        Connection(byte[] body) {
            this.bytes = new ByteArrayInputStream(body);
        }

        int take(int wanted) {
            byte[] ignored = new byte[wanted];
            int n = bytes.read(ignored, 0, wanted);
            taken += Math.max(n, 0);
            return n;
        }

        @Override
        public int read() {
            return take(1) < 0 ? -1 : 0;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            return take(len);
        }

        @Override
        public boolean isFinished() {
            return bytes.available() == 0;
        }

        @Override
        public boolean isReady() {
            return true;
        }

        @Override
        public void setReadListener(ReadListener listener) {
            throw new UnsupportedOperationException();
        }
    }
}
