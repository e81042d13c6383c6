package io.agentbox.worker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** Where a worker keeps its sandbox layers. */
public final class WorkerDirs {
    private WorkerDirs() {}

    /**
     * {@code preferred} when every existing ancestor is searchable by other users (o+x), which a
     * root worker needs to run sandboxes as an unprivileged host uid; otherwise (for example under
     * a 0700 home directory) a directory of its own under the system temp dir, {@code
     * agentbox-<hash of preferred>}, mode 0711. Layers are deleted when sandboxes end and at the
     * next start, so a temp location loses nothing.
     */
    public static Path sandboxDataDir(Path preferred) {
        Path abs = preferred.toAbsolutePath().normalize();
        if (searchable(abs)) {
            return abs;
        }
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"), "agentbox-" + shortHash(abs.toString()));
        try {
            Files.createDirectories(tmp);
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwx--x--x"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create sandbox directory " + tmp, e);
        }
        return tmp;
    }

    private static boolean searchable(Path dir) {
        for (Path p = dir; p != null; p = p.getParent()) {
            if (!Files.exists(p)) {
                continue;
            }
            try {
                if (!Files.getPosixFilePermissions(p).contains(PosixFilePermission.OTHERS_EXECUTE)) {
                    return false;
                }
            } catch (IOException | UnsupportedOperationException e) {
                return false;
            }
        }
        return true;
    }

    private static String shortHash(String s) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 4);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
