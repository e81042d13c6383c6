package io.agentbox.worker.runtime.local;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The per-sandbox directory {@code <sandboxesDir>/<id>/}: {@code home/} (mounted at /home/user),
 * {@code tmp/} (mounted at /tmp) and {@code bwrap.log} (bubblewrap's stderr, never visible
 * inside). The passwd and group files mounted over /etc are the same for every sandbox, so they
 * are written once per runtime ({@link #writeEtc}) and bound read-only.
 */
final class LayerDirs {
    static final String PASSWD = "root:x:0:0:root:/root:/bin/bash\n"
            + "user:x:" + LocalRuntime.SANDBOX_UID + ":" + LocalRuntime.SANDBOX_UID + ":user:/home/user:/bin/bash\n"
            + "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
    static final String GROUP = "root:x:0:\nuser:x:" + LocalRuntime.SANDBOX_UID + ":\nnogroup:x:65534:\n";

    final Path root;
    final Path home;
    final Path tmp;
    final Path log;

    LayerDirs(Path root) {
        this.root = root;
        this.home = root.resolve("home");
        this.tmp = root.resolve("tmp");
        this.log = root.resolve("bwrap.log");
    }

    /**
     * Creates the layer. {@code ownerUid} >= 0 chowns home/ and tmp/ to the host uid the sandbox
     * user maps to (needed when the worker is root and sandboxes run as an unprivileged uid).
     */
    void create(int ownerUid) throws IOException {
        Files.createDirectory(root, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx--x--x")));
        Files.createDirectory(home);
        Files.createDirectory(tmp);
        Files.setPosixFilePermissions(home, PosixFilePermissions.fromString("rwxr-xr-x"));
        // sticky, world-writable like a real /tmp
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxrwxrwx"));
        if (ownerUid >= 0) {
            for (Path p : new Path[] {home, tmp}) {
                Files.setAttribute(p, "unix:uid", ownerUid, LinkOption.NOFOLLOW_LINKS);
                Files.setAttribute(p, "unix:gid", ownerUid, LinkOption.NOFOLLOW_LINKS);
            }
        }
        Files.setAttribute(tmp, "unix:mode", 01777);
    }

    /**
     * (Re)writes {@code dir/passwd} and {@code dir/group}, readable by the unprivileged uid
     * bubblewrap may run as.
     */
    static void writeEtc(Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        for (String[] f : new String[][] {{"passwd", PASSWD}, {"group", GROUP}}) {
            Path p = dir.resolve(f[0]);
            Files.writeString(p, f[1], StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rw-r--r--"));
        }
    }

    /** Deletes a directory tree without following symlinks; makes read-only dirs writable first. */
    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) {
                try {
                    // a non-root worker cannot delete entries of a dir the sandbox made read-only
                    Files.setAttribute(d, "unix:mode", 0700, LinkOption.NOFOLLOW_LINKS);
                } catch (IOException | RuntimeException ignored) {
                    // best effort; the delete below reports the real failure
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes attrs) throws IOException {
                Files.deleteIfExists(f);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path f, IOException e) throws IOException {
                if (e instanceof NoSuchFileException) {
                    return FileVisitResult.CONTINUE;
                }
                throw e;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                if (e != null && !(e instanceof NoSuchFileException)) {
                    throw e;
                }
                Files.deleteIfExists(d);
                return FileVisitResult.CONTINUE;
            }
        });
    }
}
