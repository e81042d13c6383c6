package io.agentbox.worker.image.unpack;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Opens files below a directory that someone else may be changing at the same moment, without
 * ever leaving it: {@code openat2(2)} (Linux 5.6+) with {@code RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV}, so a path component swapped
 * for a symlink (or a mount) between a listing and the open fails the open instead of reaching a
 * file of the host. Used to read a running sandbox's writable layer.
 */
final class Beneath implements AutoCloseable {
    // generic syscall number, the same on x86_64 and aarch64
    private static final long SYS_OPENAT2 = 437;
    private static final long O_RDONLY = 0;
    private static final long O_NOFOLLOW = 0400000;
    private static final long O_CLOEXEC = 02000000;
    private static final long O_DIRECTORY = 0200000;
    private static final long RESOLVE_NO_XDEV = 0x01;
    private static final long RESOLVE_NO_MAGICLINKS = 0x02;
    private static final long RESOLVE_NO_SYMLINKS = 0x04;
    private static final long RESOLVE_BENEATH = 0x08;

    interface LibC extends Library {
        LibC C = Native.load("c", LibC.class);

        long syscall(long number, Object... args);

        int close(int fd);
    }

    private static final boolean AVAILABLE = probe();

    private final int dirFd;
    private final Path path;

    private Beneath(int dirFd) {
        this.dirFd = dirFd;
        this.path = Path.of("/proc/self/fd/" + dirFd);
    }

    /** Whether this kernel has openat2 (and JNA loads): otherwise callers read only frozen trees. */
    static boolean available() {
        return AVAILABLE;
    }

    /**
     * Opens {@code dir} itself (its own path is trusted: only components below it may change).
     *
     * @throws IOException naming the directory and errno
     */
    static Beneath open(Path dir) throws IOException {
        long fd = openat2(-100 /* AT_FDCWD */, dir.toString(), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
        if (fd < 0) {
            throw new IOException("cannot open " + dir + ": errno " + Native.getLastError());
        }
        return new Beneath((int) fd);
    }

    /**
     * Opens the child directory {@code name} the same way, or returns null when it cannot be
     * reached without a symlink or a mount (or is gone, or is no directory).
     */
    Beneath dir(String name) {
        long fd = openat2(dirFd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV);
        return fd < 0 ? null : new Beneath((int) fd);
    }

    /**
     * This directory as a path that stays on it whatever is renamed meanwhile
     * ({@code /proc/self/fd/N}): a child's lstat or listxattr through it reaches the child of
     * exactly this directory.
     */
    Path path() {
        return path;
    }

    /**
     * Opens {@code relative} (no leading slash) for reading, or returns null when it cannot be
     * reached without a symlink, a mount or a {@code ..} (or is gone).
     */
    FileChannel read(String relative) throws IOException {
        long fd = openat2(dirFd, relative, O_RDONLY | O_NOFOLLOW | O_CLOEXEC,
                RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV);
        if (fd < 0) {
            return null;
        }
        try {
            // reopening the descriptor's magic link opens exactly that file, never a path again
            return FileChannel.open(Path.of("/proc/self/fd/" + fd), StandardOpenOption.READ);
        } finally {
            LibC.C.close((int) fd);
        }
    }

    private static long openat2(int dirFd, String path, long flags, long resolve) {
        Memory how = new Memory(24); // struct open_how { u64 flags; u64 mode; u64 resolve; }
        how.setLong(0, flags);
        how.setLong(8, 0);
        how.setLong(16, resolve);
        return LibC.C.syscall(SYS_OPENAT2, dirFd, path, how, 24L);
    }

    private static boolean probe() {
        try {
            long fd = openat2(-100, "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
            if (fd < 0) {
                return false;
            }
            LibC.C.close((int) fd);
            return true;
        } catch (Throwable t) { // UnsatisfiedLinkError, NoClassDefFoundError without JNA
            return false;
        }
    }

    @Override
    public void close() {
        LibC.C.close(dirFd);
    }
}
