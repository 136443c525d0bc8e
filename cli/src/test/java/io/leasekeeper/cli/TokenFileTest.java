package io.leasekeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code --token-file} check: group or others able to read the file is worth a warning; nothing else is. */
class TokenFileTest {

    @TempDir
    Path dir;

    private Path tokenFile(String permissions) throws Exception {
        Path file = Files.writeString(dir.resolve("token-" + permissions), "t\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(permissions));
        return file;
    }

    @Test
    void aFileItsGroupOrOthersMayReadIsNamedWithItsPermissions() throws Exception {
        Path everyone = tokenFile("rw-r--r--");
        assertThat(TokenFile.exposure(everyone)).hasValue("warning: --token-file " + everyone + " can be read by"
                + " its group and others (rw-r--r--); the token in it is your identity to the service: chmod 600 "
                + everyone);
        assertThat(TokenFile.exposure(tokenFile("rw-r-----"))).hasValueSatisfying(warning ->
                assertThat(warning).contains("can be read by its group (rw-r-----)"));
        assertThat(TokenFile.exposure(tokenFile("rw----r--"))).hasValueSatisfying(warning ->
                assertThat(warning).contains("can be read by others (rw----r--)"));
    }

    @Test
    void aFileOnlyItsOwnerMayReadGetsNoWarning() throws Exception {
        assertThat(TokenFile.exposure(tokenFile("rw-------"))).isEmpty();
        assertThat(TokenFile.exposure(tokenFile("r--------"))).isEmpty();
        assertThat(TokenFile.exposure(tokenFile("rw--w--w-"))).as("written by others, but not read").isEmpty();
    }

    @Test
    void aFileSystemWithoutPosixPermissionsIsSkippedSilently() throws Exception {
        URI zip = URI.create("jar:" + dir.resolve("tokens.zip").toUri());
        try (FileSystem withoutPosix = FileSystems.newFileSystem(zip, Map.of("create", "true"))) {
            Path file = Files.writeString(withoutPosix.getPath("token"), "t\n");
            assertThat(Files.readString(file)).as("a readable token file").isEqualTo("t\n");

            assertThat(TokenFile.exposure(file)).isEmpty();
        }
    }
}
