package io.agentbox.manager.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

/** Files and directories only the hub's user may read: secrets shown once (admin key, manager token) and the H2 store. */
final class OwnerOnlyFiles {
    private OwnerOnlyFiles() {}

    /** Replaces {@code file} with {@code content}, created with mode rw------- (where the file system has modes). */
    static void write(Path file, String content) {
        try {
            Files.deleteIfExists(file);
            try {
                Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            } catch (UnsupportedOperationException notPosix) {
                Files.createFile(file);
            }
            Files.writeString(file, content, StandardCharsets.UTF_8, StandardOpenOption.TRUNCATE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    /** Creates {@code dir} (and parents) and sets it to rwx------. */
    static void directory(Path dir) {
        try {
            Files.createDirectories(dir);
            try {
                Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
            } catch (UnsupportedOperationException notPosix) {
                // nothing to tighten on this file system
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir, e);
        }
    }
}
