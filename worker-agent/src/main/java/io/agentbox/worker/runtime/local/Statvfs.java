package io.agentbox.worker.runtime.local;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import java.nio.file.Path;

/**
 * {@code statvfs(3)} through JNA. {@link java.nio.file.Files#getFileStore} cannot be used: it looks
 * the mount up in the JVM's own mount table, and a sandbox's writable layer is mounted only in the
 * runtime's private namespace (reached through {@code /proc/<holder>/root}).
 */
final class Statvfs {
    /** Bytes in use and in total on one file system. */
    record Space(long used, long total) {}

    interface LibC extends Library {
        LibC C = Native.load("c", LibC.class);

        int statvfs(String path, Memory buf);
    }

    /** glibc's struct statvfs on 64-bit Linux: unsigned longs f_bsize, f_frsize, f_blocks, f_bfree, … */
    private static final int SIZE = 112;
    private static final int F_FRSIZE = 8;
    private static final int F_BLOCKS = 16;
    private static final int F_BFREE = 24;

    private Statvfs() {}

    /** @return the space of the file system holding {@code path}, or null when it cannot be read */
    static Space of(Path path) {
        Memory buf = new Memory(SIZE);
        buf.clear();
        if (LibC.C.statvfs(path.toString(), buf) != 0) {
            return null;
        }
        long frsize = buf.getLong(F_FRSIZE);
        long blocks = buf.getLong(F_BLOCKS);
        long free = buf.getLong(F_BFREE);
        return new Space((blocks - free) * frsize, blocks * frsize);
    }
}
