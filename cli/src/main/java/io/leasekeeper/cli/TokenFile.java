package io.leasekeeper.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import java.util.Set;

/**
 * The {@code --token-file} check: a bearer token is the caller's identity, so its file should be readable by its
 * owner alone. Only POSIX permissions are read; on a file system without them (or a file whose attributes cannot be
 * read, which reading it will report) there is nothing to say.
 */
final class TokenFile {

    private TokenFile() {
    }

    /** The warning for a file its group or others may read (one line, without the {@code leasekeeper: }), else none. */
    static Optional<String> exposure(Path file) {
        Set<PosixFilePermission> permissions;
        try {
            permissions = Files.getPosixFilePermissions(file);
        } catch (UnsupportedOperationException | IOException noPosixPermissions) {
            return Optional.empty();
        }
        boolean group = permissions.contains(PosixFilePermission.GROUP_READ);
        boolean others = permissions.contains(PosixFilePermission.OTHERS_READ);
        if (!group && !others) {
            return Optional.empty();
        }
        String readers = group && others ? "its group and others" : group ? "its group" : "others";
        return Optional.of("warning: --token-file " + file + " can be read by " + readers + " ("
                + PosixFilePermissions.toString(permissions) + "); the token in it is your identity to the service:"
                + " chmod 600 " + file);
    }
}
