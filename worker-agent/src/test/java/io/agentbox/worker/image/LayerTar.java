package io.agentbox.worker.image;

import com.github.luben.zstd.ZstdOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Map;
import java.util.zip.GZIPOutputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;

/**
 * The tests' own layer tar builder (commons-compress): regular files with modes and owners,
 * directories, symlinks, hardlinks, FIFOs, device nodes, OCI whiteouts and opaque markers, PAX
 * xattrs, and raw entries with any name (hostile ones included: nothing is normalised). Entries
 * are written in call order; every mtime is {@link #MTIME} unless given, so the same calls give
 * the same bytes and digests.
 */
public final class LayerTar {
    public static final Instant MTIME = Instant.parse("2024-05-01T12:00:00Z");

    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final TarArchiveOutputStream tar;
    private boolean finished;

    public LayerTar() {
        tar = new TarArchiveOutputStream(bytes);
        tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
        tar.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
        tar.setAddPaxHeadersForNonAsciiNames(true);
    }

    public LayerTar dir(String name) {
        return dir(name, 0755, 0, 0);
    }

    public LayerTar dir(String name, int mode, long uid, long gid) {
        TarArchiveEntry e = entry(name.endsWith("/") ? name : name + "/", TarConstants.LF_DIR);
        e.setMode(mode);
        e.setUserId(uid);
        e.setGroupId(gid);
        return put(e, null);
    }

    public LayerTar file(String name, String content) {
        return file(name, content.getBytes(StandardCharsets.UTF_8), 0644, 0, 0, Map.of());
    }

    public LayerTar file(String name, String content, int mode) {
        return file(name, content.getBytes(StandardCharsets.UTF_8), mode, 0, 0, Map.of());
    }

    public LayerTar file(String name, String content, int mode, long uid, long gid) {
        return file(name, content.getBytes(StandardCharsets.UTF_8), mode, uid, gid, Map.of());
    }

    /** A regular file with PAX extended headers, e.g. {@code SCHILY.xattr.user.note=hello}. */
    public LayerTar file(String name, byte[] content, int mode, long uid, long gid, Map<String, String> pax) {
        TarArchiveEntry e = entry(name, TarConstants.LF_NORMAL);
        e.setMode(mode);
        e.setUserId(uid);
        e.setGroupId(gid);
        e.setSize(content.length);
        pax.forEach(e::addPaxHeader);
        return put(e, content);
    }

    public LayerTar symlink(String name, String target) {
        TarArchiveEntry e = entry(name, TarConstants.LF_SYMLINK);
        e.setLinkName(target);
        e.setMode(0777);
        return put(e, null);
    }

    public LayerTar hardlink(String name, String target) {
        TarArchiveEntry e = entry(name, TarConstants.LF_LINK);
        e.setLinkName(target);
        e.setMode(0644);
        return put(e, null);
    }

    public LayerTar fifo(String name, int mode) {
        TarArchiveEntry e = entry(name, TarConstants.LF_FIFO);
        e.setMode(mode);
        return put(e, null);
    }

    public LayerTar charDevice(String name, int major, int minor) {
        TarArchiveEntry e = entry(name, TarConstants.LF_CHR);
        e.setMode(0666);
        e.setDevMajor(major);
        e.setDevMinor(minor);
        return put(e, null);
    }

    /** OCI whiteout of {@code path}: an empty file {@code dir/.wh.name}. */
    public LayerTar whiteout(String path) {
        int slash = path.lastIndexOf('/');
        String name = slash < 0 ? ".wh." + path : path.substring(0, slash + 1) + ".wh." + path.substring(slash + 1);
        return file(name, "", 0644);
    }

    /** OCI opaque marker: {@code dir/.wh..wh..opq}. */
    public LayerTar opaque(String dir) {
        return file(dir + "/.wh..wh..opq", "", 0644);
    }

    /** Any entry, name and link target taken as given (absolute, {@code ..}: whatever the test needs). */
    public LayerTar raw(String name, byte type, String linkName, byte[] content) {
        TarArchiveEntry e = new TarArchiveEntry(name, type, true);
        e.setModTime(java.nio.file.attribute.FileTime.from(MTIME));
        e.setMode(type == TarConstants.LF_DIR ? 0755 : 0644);
        if (linkName != null) {
            e.setLinkName(linkName);
        }
        if (content != null) {
            e.setSize(content.length);
        }
        return put(e, content);
    }

    private TarArchiveEntry entry(String name, byte type) {
        TarArchiveEntry e = new TarArchiveEntry(name, type, true);
        e.setModTime(java.nio.file.attribute.FileTime.from(MTIME));
        return e;
    }

    private LayerTar put(TarArchiveEntry e, byte[] content) {
        if (finished) {
            throw new IllegalStateException("tar already finished");
        }
        try {
            tar.putArchiveEntry(e);
            if (content != null) {
                tar.write(content);
            }
            tar.closeArchiveEntry();
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        return this;
    }

    /** The uncompressed tar (finishes the archive; no entries can follow). */
    public byte[] tar() {
        if (!finished) {
            try {
                tar.finish();
                tar.close();
            } catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
            finished = true;
        }
        return bytes.toByteArray();
    }

    public byte[] gzip() {
        return gzip(tar());
    }

    public byte[] zstd() {
        return zstd(tar());
    }

    public static byte[] gzip(byte[] data) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(data);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    public static byte[] zstd(byte[] data) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ZstdOutputStream z = new ZstdOutputStream(out, 3)) {
            z.write(data);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /** {@code sha256:<hex>} of {@code data}. */
    public static String sha256(byte[] data) {
        try {
            return "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
