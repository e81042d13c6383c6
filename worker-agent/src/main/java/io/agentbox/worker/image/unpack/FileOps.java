package io.agentbox.worker.image.unpack;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * File operations the unpacker needs beyond java.nio: numeric owners, full modes (setuid kept),
 * {@code user.*} xattrs, and the few nodes Java cannot create (FIFOs, 0/0 whiteout devices),
 * which are made by coreutils' {@code mkfifo}/{@code mknod}. Nothing here follows a symlink.
 */
final class FileOps {
    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;
    private static final long TOOL_TIMEOUT_SECONDS = 30;

    private FileOps() {}

    /** lchown to host ids. */
    static void chown(Path p, int uid, int gid) throws IOException {
        Files.setAttribute(p, "unix:uid", uid, NOFOLLOW);
        Files.setAttribute(p, "unix:gid", gid, NOFOLLOW);
    }

    /** chmod with all 12 mode bits; after chown, which clears setuid/setgid. Not for symlinks or FIFOs. */
    static void chmod(Path p, int mode) throws IOException {
        Files.setAttribute(p, "unix:mode", mode & 07777, NOFOLLOW);
    }

    /** Sets the modification time without following a symlink. Not for FIFOs (Java opens the file). */
    static void mtime(Path p, FileTime time) throws IOException {
        Files.getFileAttributeView(p, BasicFileAttributeView.class, NOFOLLOW).setTimes(time, null, null);
    }

    /** Sets {@code user.<name>}; {@code name} is given without the {@code user.} prefix. */
    static void setUserXattr(Path p, String name, byte[] value) throws IOException {
        Files.getFileAttributeView(p, UserDefinedFileAttributeView.class, NOFOLLOW).write(name, ByteBuffer.wrap(value));
    }

    static void setUserXattr(Path p, String name, String value) throws IOException {
        setUserXattr(p, name, value.getBytes(StandardCharsets.UTF_8));
    }

    /** {@code user.<name>} value, or null when unset. */
    static byte[] userXattr(Path p, String name) throws IOException {
        UserDefinedFileAttributeView v = Files.getFileAttributeView(p, UserDefinedFileAttributeView.class, NOFOLLOW);
        if (!v.list().contains(name)) {
            return null;
        }
        ByteBuffer b = ByteBuffer.allocate(v.size(name));
        v.read(name, b);
        return b.array();
    }

    /** Names of the {@code user.*} xattrs (without the prefix); empty for symlinks. */
    static List<String> userXattrs(Path p) throws IOException {
        if (Files.isSymbolicLink(p)) {
            return List.of();
        }
        return Files.getFileAttributeView(p, UserDefinedFileAttributeView.class, NOFOLLOW).list();
    }

    /** A FIFO with {@code mode} (umask not applied). */
    static void mkfifo(Path p, int mode) throws IOException {
        run(List.of("mkfifo", "-m", Integer.toOctalString(mode & 07777), "--", p.toString()));
    }

    /** A character device 0/0: the classic overlayfs whiteout. */
    static void mknodWhiteout(Path p) throws IOException {
        run(List.of("mknod", "-m", "000", "--", p.toString(), "c", "0", "0"));
    }

    /** Sets the mtime of a FIFO (or anything) by path, without opening it. */
    static void touchNoOpen(Path p, FileTime time) throws IOException {
        Instant t = time.toInstant();
        run(List.of("touch", "-h", "-m", "-d", "@" + t.getEpochSecond() + "." + String.format("%09d", t.getNano()),
                "--", p.toString()));
    }

    private static void run(List<String> command) throws IOException {
        List<String> cmd = new ArrayList<>(command);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try {
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readNBytes(4096);
            if (!p.waitFor(TOOL_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + ": no exit after " + TOOL_TIMEOUT_SECONDS + " s");
            }
            if (p.exitValue() != 0) {
                throw new IOException(String.join(" ", cmd) + " failed: " + new String(out, StandardCharsets.UTF_8).trim());
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted running " + cmd.get(0), e);
        }
    }
}
