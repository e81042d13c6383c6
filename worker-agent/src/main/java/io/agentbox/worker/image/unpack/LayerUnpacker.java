package io.agentbox.worker.image.unpack;

import io.agentbox.worker.image.HostIdRange;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributes;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;

/**
 * Unpacks one OCI layer blob (image-spec {@code layer.md}) into a directory in overlayfs form,
 * for mounting with {@code userxattr}.
 *
 * <ul>
 *   <li>Compression (gzip, zstd, none) is read from the blob's first bytes.</li>
 *   <li>The diff_id (SHA-256 of the uncompressed tar) is computed while unpacking.</li>
 *   <li>{@code .wh.NAME} becomes a whiteout in the {@link WhiteoutForm} chosen at construction;
 *       {@code .wh..wh..opq} marks the directory {@code user.overlay.opaque=y}. A whiteout only
 *       hides lower layers: a name the same layer also holds is kept.</li>
 *   <li>Owners are shifted into the sandboxes' host range ({@link HostIdRange#toHost}); an id
 *       above 65535 fails the layer. Modes are set after the owner (setuid survives), directory
 *       metadata and times last.</li>
 *   <li>Symlinks are created, never followed. Hardlinks must name a file of the same layer; one
 *       only found in the {@link LowerLayers} is copied up first. FIFOs are kept; device nodes
 *       are skipped (the runtime provides {@code /dev}).</li>
 *   <li>PAX {@code SCHILY.xattr.user.*} / {@code LIBARCHIVE.xattr.user.*} are kept; any
 *       {@code *.overlay.*} xattr is dropped (it would let an image rewrite its own merged view);
 *       {@code security.*} (file capabilities), {@code trusted.*} and {@code system.*} cannot be
 *       set from Java and are reported in {@link UnpackResult#skipped()}.</li>
 * </ul>
 *
 * <p>Confinement: names are normalised and refused when absolute or holding {@code ..}; every
 * parent must be a real directory inside the layer (never a symlink); hardlink targets follow the
 * same rules. A refused entry fails the whole layer with a {@link BadLayerException} naming it.
 * Nothing is written outside {@code dir}: every node is created with {@code O_EXCL}/no-follow
 * semantics under parents checked to be real directories, and this unpacker is the only writer.
 *
 * <p>Needs root (or a user namespace's root) to set owners. Thread-safe: each {@link #unpack}
 * call keeps its own state, so one instance serves concurrent unpacks into different directories.
 */
public final class LayerUnpacker {
    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;
    private static final String WHITEOUT_PREFIX = ".wh.";
    private static final String OPAQUE_MARKER = ".wh..wh..opq";
    private static final int COPY_BUFFER = 128 * 1024;
    private static final int TAR_BLOCK = 512;
    private static final int MAX_SKIPPED_LINES = 100;
    private static final int S_IFMT = 0170000;
    private static final int S_IFCHR = 0020000;

    private final UnpackLimits limits;
    private final WhiteoutForm whiteouts;

    public LayerUnpacker(UnpackLimits limits, WhiteoutForm whiteouts) {
        this.limits = limits;
        this.whiteouts = whiteouts;
    }

    /** Default limits and the whiteout form of the running kernel. */
    public static LayerUnpacker forThisKernel() {
        return new LayerUnpacker(UnpackLimits.DEFAULT, WhiteoutForm.forThisKernel());
    }

    public WhiteoutForm whiteoutForm() {
        return whiteouts;
    }

    /**
     * Unpacks {@code blob} (read to its end, not closed) into {@code dir}.
     *
     * @param dir an existing empty directory; on failure its contents are removed again
     * @param lowers the layers below, for hardlinks into them
     * @throws BadLayerException naming the entry for hostile or malformed content and passed limits
     * @throws IOException on read or write failures
     */
    public UnpackResult unpack(InputStream blob, Path dir, LowerLayers lowers) throws IOException {
        if (!Files.isDirectory(dir, NOFOLLOW)) {
            throw new NoSuchFileException(dir.toString(), null, "layer directory does not exist");
        }
        try (var listing = Files.list(dir)) {
            if (listing.findAny().isPresent()) {
                throw new FileAlreadyExistsException(dir.toString(), null, "layer directory is not empty");
            }
        }
        try {
            return new Run(dir, lowers).unpack(blob);
        } catch (IOException | RuntimeException e) {
            try {
                Trees.deleteContents(dir);
            } catch (IOException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    /** Metadata of a directory, applied after every entry is written. */
    private record DirMeta(int uid, int gid, int mode, FileTime mtime, Map<String, byte[]> xattrs) {}

    /** State of one unpack. */
    private final class Run {
        private final Path root;
        private final LowerLayers lowers;
        private List<Path> lowerDirs;
        private final Set<String> realDirs = new HashSet<>();
        private final Map<String, DirMeta> dirMeta = new HashMap<>();
        private final Set<String> opaqueDirs = new HashSet<>();
        private final Set<String> xattrWhiteoutDirs = new HashSet<>();
        private final Set<String> whiteoutNodes = new HashSet<>();
        private final List<String> skipped = new ArrayList<>();
        private long skippedMore;
        private final int rootUid = HostIdRange.toHost(0);

        Run(Path root, LowerLayers lowers) {
            this.root = root;
            this.lowers = lowers;
            realDirs.add("");
        }

        UnpackResult unpack(InputStream blob) throws IOException {
            MessageDigest sha;
            try {
                sha = MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
            InputStream plain = Compression.decompress(new NonClosing(blob));
            Counting counted = new Counting(new DigestInputStream(plain, sha), limits.maxBytes());
            long entries = 0;
            TarArchiveInputStream tar = new TarArchiveInputStream(counted);
            TarArchiveEntry e;
            while ((e = nextEntry(tar, entries)) != null) {
                entries++;
                counted.entry = e.getName();
                if (entries > limits.maxEntries()) {
                    throw new BadLayerException(e.getName(), "layer has more than the limit of " + limits.maxEntries() + " entries");
                }
                entry(tar, e);
            }
            // the end-of-archive blocks and any padding after them are part of the diff_id
            counted.transferTo(OutputStream.nullOutputStream());
            if (entries == 0 && counted.count % TAR_BLOCK != 0) {
                // the tar reader takes input shorter than one header for an empty archive
                throw new BadLayerException(null, "not a tar archive: " + counted.count + " bytes with no tar header "
                        + "(a tar archive is a whole number of " + TAR_BLOCK + "-byte blocks)");
            }
            finishDirectories();
            String diffId = "sha256:" + HexFormat.of().formatHex(sha.digest());
            if (skippedMore > 0) {
                skipped.add("... and " + skippedMore + " more");
            }
            return new UnpackResult(diffId, counted.count, entries, skipped);
        }

        private TarArchiveEntry nextEntry(TarArchiveInputStream tar, long index) throws IOException {
            try {
                return tar.getNextEntry();
            } catch (BadLayerException e) {
                throw e;
            } catch (IOException | IllegalArgumentException e) {
                throw new BadLayerException(null, "malformed tar after entry #" + index + ": " + e.getMessage());
            }
        }

        private void entry(TarArchiveInputStream tar, TarArchiveEntry e) throws IOException {
            String raw = e.getName();
            String rel = EntryNames.normalise(raw, raw, limits.maxPathLength());
            String base = EntryNames.base(rel);
            if (base.equals(OPAQUE_MARKER)) {
                opaque(raw, EntryNames.parent(rel));
                return;
            }
            if (base.startsWith(WHITEOUT_PREFIX)) {
                whiteout(raw, EntryNames.parent(rel), base.substring(WHITEOUT_PREFIX.length()));
                return;
            }
            if (e.isCharacterDevice() || e.isBlockDevice()) {
                skip(rel.isEmpty() ? "/" : rel, "device node not created (the runtime provides /dev)");
                return;
            }
            if (rel.isEmpty()) {
                if (!e.isDirectory()) {
                    throw new BadLayerException(raw, "the layer root must be a directory");
                }
                directory(raw, rel, e);
                return;
            }
            int uid = hostId(raw, "uid", e.getLongUserId());
            int gid = hostId(raw, "gid", e.getLongGroupId());
            if (e.isDirectory()) {
                directory(raw, rel, e);
            } else if (e.isSymbolicLink()) {
                Path p = prepare(raw, rel);
                Path target;
                try {
                    target = Path.of(e.getLinkName());
                } catch (InvalidPathException bad) {
                    throw new BadLayerException(raw, "invalid symlink target: " + bad.getMessage());
                }
                if (e.getLinkName().isEmpty() || e.getLinkName().length() > limits.maxPathLength()) {
                    throw new BadLayerException(raw, "symlink target is empty or longer than " + limits.maxPathLength() + " characters");
                }
                Files.createSymbolicLink(p, target);
                FileOps.chown(p, uid, gid);
                xattrs(raw, rel, p, e, true);
                FileOps.mtime(p, e.getLastModifiedTime());
            } else if (e.isLink()) {
                hardlink(raw, rel, e);
            } else if (e.isFIFO()) {
                Path p = prepare(raw, rel);
                FileOps.mkfifo(p, e.getMode());
                FileOps.chown(p, uid, gid);
                xattrs(raw, rel, p, e, false);
                FileOps.touchNoOpen(p, e.getLastModifiedTime());
            } else if (e.isFile()) {
                Path p = prepare(raw, rel);
                try (OutputStream out = Files.newOutputStream(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, NOFOLLOW)) {
                    copy(tar, out);
                }
                FileOps.chown(p, uid, gid);
                FileOps.chmod(p, e.getMode());
                xattrs(raw, rel, p, e, false);
                FileOps.mtime(p, e.getLastModifiedTime());
            } else {
                throw new BadLayerException(raw, "unsupported tar entry type '" + (char) e.getLinkFlag() + "'");
            }
        }

        private void copy(InputStream in, OutputStream out) throws IOException {
            byte[] buf = new byte[COPY_BUFFER];
            int n;
            while ((n = in.read(buf)) > 0) {
                out.write(buf, 0, n);
            }
        }

        private int hostId(String raw, String what, long id) throws BadLayerException {
            if (id < 0 || id >= HostIdRange.SIZE) {
                throw new BadLayerException(raw, "owner " + what + " " + id + " is outside the sandbox id range 0.."
                        + (HostIdRange.SIZE - 1));
            }
            return HostIdRange.toHost(id);
        }

        private void directory(String raw, String rel, TarArchiveEntry e) throws IOException {
            Path p = root.resolve(rel);
            if (!rel.isEmpty()) {
                ensureParents(raw, rel);
                BasicFileAttributes a = attrs(p);
                if (a == null || !a.isDirectory()) {
                    if (a != null) {
                        remove(rel, a);
                    }
                    Files.createDirectory(p);
                }
                realDirs.add(rel);
            }
            int uid = hostId(raw, "uid", e.getLongUserId());
            int gid = hostId(raw, "gid", e.getLongGroupId());
            dirMeta.put(rel, new DirMeta(uid, gid, e.getMode(), e.getLastModifiedTime(), userXattrs(raw, rel, e, false)));
        }

        /** {@code .wh..wh..opq}: lower layers contribute nothing to {@code dirRel}. */
        private void opaque(String raw, String dirRel) throws IOException {
            if (!dirRel.isEmpty()) {
                ensureParents(raw, dirRel);
                Path d = root.resolve(dirRel);
                BasicFileAttributes a = attrs(d);
                if (a == null || !a.isDirectory()) {
                    if (a != null) {
                        remove(dirRel, a);
                    }
                    implicitDirectory(d, dirRel);
                }
                realDirs.add(dirRel);
            }
            opaqueDirs.add(dirRel);
        }

        /** {@code .wh.NAME}: hides NAME of the lower layers, unless this layer has NAME itself. */
        private void whiteout(String raw, String dirRel, String name) throws IOException {
            if (name.equals(".") || name.equals("..")) {
                throw new BadLayerException(raw, "whiteout of '" + name + "'");
            }
            if (name.isEmpty() || name.startsWith(WHITEOUT_PREFIX)) {
                // ".wh." alone or AUFS metadata such as .wh..wh.plnk: nothing to hide
                skip(raw, "AUFS metadata entry ignored");
                return;
            }
            String rel = EntryNames.join(dirRel, name);
            ensureParents(raw, rel);
            Path p = root.resolve(rel);
            if (attrs(p) != null || isUnderOpaque(dirRel)) {
                return;
            }
            if (whiteouts == WhiteoutForm.XATTR_FILE) {
                Files.createFile(p);
                FileOps.chown(p, rootUid, rootUid);
                FileOps.setUserXattr(p, "overlay.whiteout", new byte[0]);
                xattrWhiteoutDirs.add(dirRel);
            } else {
                FileOps.mknodWhiteout(p);
                FileOps.chown(p, rootUid, rootUid);
            }
            whiteoutNodes.add(rel);
        }

        private boolean isUnderOpaque(String dirRel) {
            return opaqueDirs.contains(dirRel);
        }

        private void hardlink(String raw, String rel, TarArchiveEntry e) throws IOException {
            String target = EntryNames.normalise(raw, e.getLinkName(), limits.maxPathLength());
            if (target.isEmpty()) {
                throw new BadLayerException(raw, "hardlink to the layer root");
            }
            if (target.equals(rel)) {
                throw new BadLayerException(raw, "hardlink to itself");
            }
            Path t = root.resolve(target);
            BasicFileAttributes ta = parentsAreRealDirs(target) && !whiteoutNodes.contains(target) ? attrs(t) : null;
            if (ta == null) {
                copyUp(raw, target);
                ta = attrs(t);
            }
            if (ta.isDirectory()) {
                throw new BadLayerException(raw, "hardlink to the directory '" + target + "'");
            }
            Path p = prepare(raw, rel);
            Files.createLink(p, t);
        }

        /** Whether every parent of {@code rel} exists in this layer as a real directory (nothing is created). */
        private boolean parentsAreRealDirs(String rel) throws IOException {
            String parent = EntryNames.parent(rel);
            if (realDirs.contains(parent)) {
                return true;
            }
            String prefix = "";
            for (String c : parent.split("/")) {
                prefix = EntryNames.join(prefix, c);
                if (realDirs.contains(prefix)) {
                    continue;
                }
                BasicFileAttributes a = attrs(root.resolve(prefix));
                if (a == null || !a.isDirectory() || a.isSymbolicLink()) {
                    return false;
                }
                realDirs.add(prefix);
            }
            return true;
        }

        /** Copies the hardlink target {@code target} up from the lower layers, or fails naming the entry. */
        private void copyUp(String raw, String target) throws IOException {
            if (lowerDirs == null) {
                lowerDirs = lowers.topFirst();
            }
            LowerLookup.Found found = LowerLookup.find(lowerDirs, target);
            if (found == null) {
                throw new BadLayerException(raw, "hardlink target '" + target + "' is neither in this layer nor below it");
            }
            if (found.attrs().isDirectory()) {
                throw new BadLayerException(raw, "hardlink to the directory '" + target + "'");
            }
            ensureParents(raw, target, found.layer());
            Path dst = root.resolve(target);
            BasicFileAttributes existing = attrs(dst);
            if (existing != null) {
                remove(target, existing);
            }
            Path src = found.path();
            if (found.attrs().isSymbolicLink()) {
                Files.createSymbolicLink(dst, Files.readSymbolicLink(src));
            } else if (found.attrs().isRegularFile()) {
                Files.copy(src, dst, NOFOLLOW);
            } else {
                throw new BadLayerException(raw, "hardlink target '" + target + "' in a lower layer is not a regular file or symlink");
            }
            PosixFileAttributes pa = Files.readAttributes(src, PosixFileAttributes.class, NOFOLLOW);
            FileOps.chown(dst, (Integer) Files.getAttribute(src, "unix:uid", NOFOLLOW),
                    (Integer) Files.getAttribute(src, "unix:gid", NOFOLLOW));
            if (!pa.isSymbolicLink()) {
                FileOps.chmod(dst, (Integer) Files.getAttribute(src, "unix:mode", NOFOLLOW));
                for (String x : FileOps.userXattrs(src)) {
                    if (!isOverlayXattr("user." + x)) {
                        FileOps.setUserXattr(dst, x, FileOps.userXattr(src, x));
                    }
                }
            }
            FileOps.mtime(dst, pa.lastModifiedTime());
        }

        /**
         * Makes {@code rel}'s place ready for a new non-directory node: parents are real
         * directories, and whatever was at {@code rel} is gone.
         */
        private Path prepare(String raw, String rel) throws IOException {
            ensureParents(raw, rel);
            Path p = root.resolve(rel);
            BasicFileAttributes a = attrs(p);
            if (a != null) {
                remove(rel, a);
            }
            return p;
        }

        private void ensureParents(String raw, String rel) throws IOException {
            ensureParents(raw, rel, null);
        }

        /**
         * Every parent of {@code rel} a real directory of this layer: missing ones are created
         * (metadata copied from {@code template}, a lower layer, when it has them); a symlink or
         * a non-directory on the way fails the entry.
         */
        private void ensureParents(String raw, String rel, Path template) throws IOException {
            String parent = EntryNames.parent(rel);
            if (realDirs.contains(parent)) {
                return;
            }
            String prefix = "";
            for (String c : parent.split("/")) {
                prefix = EntryNames.join(prefix, c);
                if (realDirs.contains(prefix)) {
                    continue;
                }
                Path p = root.resolve(prefix);
                BasicFileAttributes a = attrs(p);
                if (a != null && whiteoutNodes.contains(prefix)) {
                    // this layer recreates a name it also whited out: the directory wins
                    remove(prefix, a);
                    a = null;
                }
                if (a == null) {
                    implicitDirectory(p, prefix);
                    if (template != null) {
                        mirrorDirectory(template.resolve(prefix), prefix);
                    }
                } else if (a.isSymbolicLink()) {
                    throw new BadLayerException(raw, "parent '" + prefix + "' is a symlink; writing through it is not allowed");
                } else if (!a.isDirectory()) {
                    throw new BadLayerException(raw, "parent '" + prefix + "' is not a directory");
                }
                realDirs.add(prefix);
            }
        }

        /** A directory the tar implies but does not list: root-owned 0755, as other engines make them. */
        private void implicitDirectory(Path p, String rel) throws IOException {
            Files.createDirectory(p);
            FileOps.chown(p, rootUid, rootUid);
            FileOps.chmod(p, 0755);
            realDirs.add(rel);
        }

        private void mirrorDirectory(Path lowerDir, String rel) throws IOException {
            BasicFileAttributes a = attrs(lowerDir);
            if (a == null || !a.isDirectory() || dirMeta.containsKey(rel)) {
                return;
            }
            dirMeta.put(rel, new DirMeta((Integer) Files.getAttribute(lowerDir, "unix:uid", NOFOLLOW),
                    (Integer) Files.getAttribute(lowerDir, "unix:gid", NOFOLLOW),
                    (Integer) Files.getAttribute(lowerDir, "unix:mode", NOFOLLOW), a.lastModifiedTime(), Map.of()));
        }

        /** Removes what this layer wrote at {@code rel} before, forgetting what was known under it. */
        private void remove(String rel, BasicFileAttributes a) throws IOException {
            Path p = root.resolve(rel);
            if (a.isDirectory()) {
                Trees.deleteRecursively(p);
                String under = rel + "/";
                realDirs.removeIf(d -> d.equals(rel) || d.startsWith(under));
                dirMeta.keySet().removeIf(d -> d.equals(rel) || d.startsWith(under));
                opaqueDirs.removeIf(d -> d.equals(rel) || d.startsWith(under));
                xattrWhiteoutDirs.removeIf(d -> d.equals(rel) || d.startsWith(under));
                whiteoutNodes.removeIf(d -> d.startsWith(under));
            } else {
                Files.delete(p);
                whiteoutNodes.remove(rel);
            }
        }

        private void xattrs(String raw, String rel, Path p, TarArchiveEntry e, boolean symlink) throws IOException {
            for (Map.Entry<String, byte[]> x : userXattrs(raw, rel, e, symlink).entrySet()) {
                FileOps.setUserXattr(p, x.getKey(), x.getValue());
            }
        }

        /** The entry's {@code user.*} xattrs to keep (names without the prefix); the rest is reported or dropped. */
        private Map<String, byte[]> userXattrs(String raw, String rel, TarArchiveEntry e, boolean symlink) throws BadLayerException {
            Map<String, String> pax = e.getExtraPaxHeaders();
            if (pax.isEmpty()) {
                return Map.of();
            }
            Map<String, byte[]> keep = new LinkedHashMap<>();
            for (Map.Entry<String, String> h : pax.entrySet()) {
                String name;
                byte[] value;
                if (h.getKey().startsWith("SCHILY.xattr.")) {
                    name = h.getKey().substring("SCHILY.xattr.".length());
                    value = h.getValue().getBytes(StandardCharsets.UTF_8);
                } else if (h.getKey().startsWith("LIBARCHIVE.xattr.")) {
                    name = URLDecoder.decode(h.getKey().substring("LIBARCHIVE.xattr.".length()), StandardCharsets.UTF_8);
                    try {
                        value = Base64.getDecoder().decode(h.getValue());
                    } catch (IllegalArgumentException bad) {
                        throw new BadLayerException(raw, "xattr " + name + " is not valid base64");
                    }
                } else {
                    continue;
                }
                if (isOverlayXattr(name)) {
                    skip(rel, "xattr " + name + " dropped (overlay control attributes may not come from an image)");
                } else if (!name.startsWith("user.")) {
                    skip(rel, "xattr " + name + " not kept (only user.* can be set from Java)");
                } else if (symlink) {
                    skip(rel, "xattr " + name + " not kept (Linux has no user.* xattrs on symlinks)");
                } else {
                    keep.put(name.substring("user.".length()), value);
                }
            }
            return keep;
        }

        private void skip(String what, String why) {
            if (skipped.size() < MAX_SKIPPED_LINES) {
                skipped.add(what + ": " + why);
            } else {
                skippedMore++;
            }
        }

        /** Directory metadata and overlay markers, deepest first, times last of all. */
        private void finishDirectories() throws IOException {
            if (whiteouts == WhiteoutForm.XATTR_FILE || !opaqueDirs.isEmpty()) {
                for (String w : new ArrayList<>(whiteoutNodes)) {
                    if (opaqueDirs.contains(EntryNames.parent(w))) {
                        // an opaque directory hides the lower entries anyway; an xattr whiteout in it would show as a file
                        Files.deleteIfExists(root.resolve(w));
                        whiteoutNodes.remove(w);
                    }
                }
            }
            Set<String> dirs = new HashSet<>(dirMeta.keySet());
            dirs.addAll(opaqueDirs);
            dirs.addAll(xattrWhiteoutDirs);
            String[] ordered = dirs.toArray(String[]::new);
            Arrays.sort(ordered, Comparator.comparingInt(String::length).reversed());
            for (String rel : ordered) {
                Path p = root.resolve(rel);
                BasicFileAttributes a = attrs(p);
                if (a == null || !a.isDirectory()) {
                    continue;
                }
                DirMeta m = dirMeta.get(rel);
                if (m != null) {
                    FileOps.chown(p, m.uid(), m.gid());
                    FileOps.chmod(p, m.mode());
                    for (Map.Entry<String, byte[]> x : m.xattrs().entrySet()) {
                        FileOps.setUserXattr(p, x.getKey(), x.getValue());
                    }
                } else if (rel.isEmpty()) {
                    FileOps.chown(p, rootUid, rootUid);
                    FileOps.chmod(p, 0755);
                }
                if (opaqueDirs.contains(rel)) {
                    FileOps.setUserXattr(p, "overlay.opaque", "y");
                } else if (xattrWhiteoutDirs.contains(rel) && hasWhiteoutIn(rel)) {
                    FileOps.setUserXattr(p, "overlay.opaque", "x");
                }
            }
            if (!dirMeta.containsKey("")) {
                FileOps.chown(root, rootUid, rootUid);
                FileOps.chmod(root, 0755);
            }
            for (String rel : ordered) {
                DirMeta m = dirMeta.get(rel);
                Path p = root.resolve(rel);
                if (m != null && m.mtime() != null && Files.isDirectory(p, NOFOLLOW)) {
                    FileOps.mtime(p, m.mtime());
                }
            }
        }

        private boolean hasWhiteoutIn(String dirRel) {
            for (String w : whiteoutNodes) {
                if (EntryNames.parent(w).equals(dirRel)) {
                    return true;
                }
            }
            return false;
        }
    }

    static boolean isOverlayXattr(String name) {
        return name.contains(".overlay.") || name.startsWith("overlay.");
    }

    static BasicFileAttributes attrs(Path p) throws IOException {
        try {
            return Files.readAttributes(p, BasicFileAttributes.class, NOFOLLOW);
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    static boolean isWhiteout(Path p, BasicFileAttributes a) throws IOException {
        if (a.isOther()) {
            int mode = (Integer) Files.getAttribute(p, "unix:mode", NOFOLLOW);
            long rdev = (Long) Files.getAttribute(p, "unix:rdev", NOFOLLOW);
            return (mode & S_IFMT) == S_IFCHR && rdev == 0;
        }
        return a.isRegularFile() && a.size() == 0 && FileOps.userXattr(p, "overlay.whiteout") != null;
    }

    /** Counts the uncompressed bytes and stops at the limit. */
    private static final class Counting extends FilterInputStream {
        private final long max;
        long count;
        /** The entry being read, for messages. */
        String entry;

        Counting(InputStream in, long max) {
            super(in);
            this.max = max;
        }

        @Override
        public int read() throws IOException {
            int b;
            try {
                b = super.read();
            } catch (BadLayerException e) {
                throw e;
            } catch (IOException e) {
                throw malformed(e);
            }
            if (b >= 0) {
                add(1);
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n;
            try {
                n = super.read(b, off, len);
            } catch (BadLayerException e) {
                throw e;
            } catch (IOException e) {
                throw malformed(e);
            }
            if (n > 0) {
                add(n);
            }
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            // read instead of skip so the digest sees every byte
            byte[] buf = new byte[(int) Math.min(n, COPY_BUFFER)];
            int r = read(buf, 0, buf.length);
            return Math.max(r, 0);
        }

        private BadLayerException malformed(IOException e) {
            BadLayerException bad = new BadLayerException(entry, "layer blob is truncated or corrupt ("
                    + (e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName()) + ")");
            bad.initCause(e);
            return bad;
        }

        private void add(long n) throws BadLayerException {
            count += n;
            if (count > max) {
                throw new BadLayerException(null, "layer is larger than the limit of " + max + " bytes uncompressed");
            }
        }
    }

    /** Leaves the caller's stream open. */
    private static final class NonClosing extends FilterInputStream {
        NonClosing(InputStream in) {
            super(in);
        }

        @Override
        public void close() {}
    }
}
