package io.agentbox.worker.build;

import io.agentbox.worker.image.Descriptor;
import io.agentbox.worker.image.store.Digests;
import io.agentbox.worker.image.HostIdRange;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.Deflater;
import java.util.zip.GZIPOutputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;

/**
 * Turns a sandbox's writable layer (an overlay upper directory: whiteouts as character devices 0/0
 * or files with {@code user.overlay.whiteout}, opaque directories marked {@code user.overlay.opaque=y},
 * owners as host ids) into an OCI layer blob (image-spec {@code layer.md}): gzip tar with
 * {@code .wh.NAME} whiteouts and {@code .wh..wh..opq} markers, owners shifted back to sandbox ids.
 * Entries are sorted, so equal changes give equal diff_ids.
 *
 * <p>Left out: what the runtime's engine layer owns (mount points, {@code /.agentbox}, the
 * sandbox's {@code /etc/hostname}, {@code hosts}, {@code resolv.conf}), device nodes and sockets,
 * and extended attributes (file capabilities set by a step are not kept).
 *
 * <p>Also reads a layer directory of the image store (same forms: the store keeps the overlay's
 * whiteout and opaque forms and host owners), which is how a snapshot's layer gets a blob
 * ({@code snapshot/SnapshotExport}).
 */
public final class LayerWriter {
    public static final String MEDIA_TYPE = "application/vnd.oci.image.layer.v1.tar+gzip";
    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;
    private static final Set<String> ENGINE_TOP = Set.of(".agentbox", "proc", "sys", "dev");
    private static final Set<String> ENGINE_FILES = Set.of("etc/hostname", "etc/hosts", "etc/resolv.conf");
    private static final int S_IFMT = 0170000;
    private static final int S_IFDIR = 0040000;
    private static final int S_IFREG = 0100000;
    private static final int S_IFLNK = 0120000;
    private static final int S_IFCHR = 0020000;
    private static final int S_IFIFO = 0010000;
    private static final int NOBODY = 65534;

    /**
     * A layer blob written to a file.
     *
     * @param file the blob
     * @param blob its digest, size and media type
     * @param diffId digest of the uncompressed tar
     * @param entries tar entries written (0: the sandbox changed nothing that is kept)
     */
    public record Written(Path file, Descriptor blob, String diffId, long entries) {}

    private LayerWriter() {}

    /** Writes the layer of {@code upper} to {@code target} (created). */
    public static Written write(Path upper, Path target) throws IOException {
        MessageDigest compressed = Digests.sha256();
        MessageDigest plain = Digests.sha256();
        long entries;
        try (OutputStream file = Files.newOutputStream(target);
             DigestOutputStream c = new DigestOutputStream(new BufferedOutputStream(file, 1 << 16), compressed);
             GZIPOutputStream gz = new GZIPOutputStream(c, 1 << 16) {
                 { def.setLevel(Deflater.BEST_SPEED); }
             };
             DigestOutputStream p = new DigestOutputStream(gz, plain);
             TarArchiveOutputStream tar = new TarArchiveOutputStream(p)) {
            tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
            tar.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
            tar.setAddPaxHeadersForNonAsciiNames(true);
            Walk walk = new Walk(tar);
            walk.dir(upper, "");
            tar.finish();
            entries = walk.entries;
        }
        return new Written(target, new Descriptor(MEDIA_TYPE, Digests.of(compressed), Files.size(target)), Digests.of(plain),
                entries);
    }

    private static final class Walk {
        private final TarArchiveOutputStream tar;
        private final Map<Long, String> linked = new HashMap<>();
        long entries;

        Walk(TarArchiveOutputStream tar) {
            this.tar = tar;
        }

        void dir(Path dir, String prefix) throws IOException {
            List<Path> children = new ArrayList<>();
            try (var s = Files.list(dir)) {
                s.forEach(children::add);
            }
            children.sort((a, b) -> a.getFileName().toString().compareTo(b.getFileName().toString()));
            for (Path child : children) {
                String name = prefix + child.getFileName();
                if ((prefix.isEmpty() && ENGINE_TOP.contains(name)) || ENGINE_FILES.contains(name)) {
                    continue;
                }
                entry(child, name);
            }
        }

        private void entry(Path p, String name) throws IOException {
            Map<String, Object> a = Files.readAttributes(p, "unix:mode,uid,gid,rdev,ino,nlink,size,lastModifiedTime", NOFOLLOW);
            int mode = (Integer) a.get("mode");
            int type = mode & S_IFMT;
            FileTime mtime = (FileTime) a.get("lastModifiedTime");
            if ((type == S_IFCHR && (Long) a.get("rdev") == 0) || (type == S_IFREG && (Long) a.get("size") == 0
                    && hasXattr(p, "overlay.whiteout"))) {
                put(whiteout(name), p, mtime);
                return;
            }
            TarArchiveEntry e;
            switch (type) {
                case S_IFDIR -> {
                    e = new TarArchiveEntry(name + "/", TarConstants.LF_DIR);
                    own(e, a, mode);
                    put(e, p, mtime);
                    if ("y".equals(xattr(p, "overlay.opaque"))) {
                        put(new TarArchiveEntry(name + "/.wh..wh..opq"), p, mtime);
                    }
                    dir(p, name + "/");
                    return;
                }
                case S_IFREG -> {
                    long ino = (Long) a.get("ino");
                    String first = (Integer) a.get("nlink") > 1 ? linked.putIfAbsent(ino, name) : null;
                    if (first != null) {
                        e = new TarArchiveEntry(name, TarConstants.LF_LINK);
                        e.setLinkName(first);
                        own(e, a, mode);
                        put(e, p, mtime);
                        return;
                    }
                    e = new TarArchiveEntry(name);
                    own(e, a, mode);
                    e.setSize((Long) a.get("size"));
                    e.setModTime(mtime);
                    tar.putArchiveEntry(e);
                    try (InputStream in = Files.newInputStream(p, NOFOLLOW)) {
                        long copied = in.transferTo(tar);
                        if (copied != e.getSize()) {
                            throw new IOException(name + " changed while its layer was written");
                        }
                    }
                    tar.closeArchiveEntry();
                    entries++;
                    return;
                }
                case S_IFLNK -> {
                    e = new TarArchiveEntry(name, TarConstants.LF_SYMLINK);
                    e.setLinkName(Files.readSymbolicLink(p).toString());
                }
                case S_IFIFO -> e = new TarArchiveEntry(name, TarConstants.LF_FIFO);
                default -> {
                    return; // device nodes and sockets: a sandbox cannot make real ones
                }
            }
            own(e, a, mode);
            put(e, p, mtime);
        }

        private void put(TarArchiveEntry e, Path p, FileTime mtime) throws IOException {
            e.setModTime(mtime);
            tar.putArchiveEntry(e);
            tar.closeArchiveEntry();
            entries++;
        }

        private static TarArchiveEntry whiteout(String name) {
            int slash = name.lastIndexOf('/');
            TarArchiveEntry e = new TarArchiveEntry(name.substring(0, slash + 1) + ".wh." + name.substring(slash + 1));
            e.setMode(0100000);
            return e;
        }

        private static void own(TarArchiveEntry e, Map<String, Object> a, int mode) {
            e.setUserId(toSandbox((Integer) a.get("uid")));
            e.setGroupId(toSandbox((Integer) a.get("gid")));
            e.setMode((mode & S_IFMT) | (mode & 07777));
        }
    }

    /** A host id of the sandbox range as the sandbox sees it; anything else is nobody (as the kernel shows it). */
    static int toSandbox(int hostId) {
        long id = (long) hostId - HostIdRange.BASE;
        return id >= 0 && id < HostIdRange.SIZE ? (int) id : NOBODY;
    }

    private static boolean hasXattr(Path p, String name) {
        return xattr(p, name) != null;
    }

    /** The value of {@code user.<name>} on {@code p}, or null. */
    private static String xattr(Path p, String name) {
        try {
            UserDefinedFileAttributeView view = Files.getFileAttributeView(p, UserDefinedFileAttributeView.class, NOFOLLOW);
            if (view == null || !view.list().contains(name)) {
                return null;
            }
            ByteBuffer buf = ByteBuffer.allocate(view.size(name));
            view.read(name, buf);
            return new String(buf.array(), 0, buf.position(), StandardCharsets.UTF_8);
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
    }
}
