package io.leasekeeper.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

/**
 * The JVM's standard output and error replaced by buffers while the command line runs in-process
 * ({@link Leasekeeper#execute}); {@link #close()} puts the originals back. Standard output encodes with the charset
 * given, as a JVM started under that locale would.
 */
final class StandardStreams implements AutoCloseable {

    private final PrintStream stdout = System.out;
    private final PrintStream stderr = System.err;
    private final Charset outCharset;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    StandardStreams(Charset outCharset) {
        this.outCharset = outCharset;
        reset();
    }

    StandardStreams() {
        this(StandardCharsets.UTF_8);
    }

    /** Empties both buffers, for the next run. */
    void reset() {
        out.reset();
        err.reset();
        System.setOut(new PrintStream(out, true, outCharset));
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    /** What was written to standard output, read as UTF-8. */
    String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        System.setOut(stdout);
        System.setErr(stderr);
    }
}
