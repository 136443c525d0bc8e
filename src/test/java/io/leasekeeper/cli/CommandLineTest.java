package io.leasekeeper.cli;

import io.leasekeeper.support.IntegrationTest;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;

/** The command line against the whole service: its launcher pointed at the service, run in the test's own folder. */
abstract class CommandLineTest extends IntegrationTest {

    static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path dir;

    /** The command line with the service's URL and {@code token} (null: none) in its environment. */
    Cli cli(String token) {
        return new Cli(port, token, dir);
    }
}
