package io.agentbox.worker.image.unpack;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;

/**
 * Copies the writable layer (overlayfs upper directory) of a running sandbox into a layer
 * directory in the store's form (see {@link LayerUnpacker}): regular files, directories,
 * symlinks, FIFOs and hardlinks as they are, owners unchanged (already host ids of the sandbox
 * range), {@code user.*} xattrs kept except overlayfs' own bookkeeping ({@code overlay.origin},
 * {@code overlay.impure}, ...), the opaque marker {@code user.overlay.opaque=y} kept, and the
 * kernel's whiteouts (character devices 0/0) written in this store's {@link WhiteoutForm}.
 * Sockets and other device nodes are left out (listed in {@link Result#skipped()});
 * {@code security.*} xattrs (file capabilities) cannot be read from Java and are lost.
 *
 * <p>Freeze window. With {@code openat2(2)} ({@link Beneath}) the copy runs in two passes: the
 * first while the sandbox keeps running, reading through directory descriptors that never follow
 * a symlink or leave the layer (a sandbox renaming things meanwhile can only make that pass copy
 * its own files in a stale state, never a host file); the second while it is frozen
 * ({@link Freezer}; the time it reports is the walk, without the freeze and thaw themselves): it lists and lstats every entry again and copies only what is new or whose
 * (inode, ctime, size, mode, owner) changed since it was copied. Deletions of stale entries,
 * owners, modes, xattrs, times and the digest are done after the thaw from what the frozen pass
 * saw. So the sandbox stands still for one stat walk plus what it wrote during the first pass.
 * Without openat2 everything is copied while frozen.
 *
 * <p>The content id ({@link Result#digest()}) is a SHA-256 over a canonical listing of the layer
 * (path, type, mode, owner, mtime, size, content SHA-256 or link target, xattrs, in path order):
 * the same tree gives the same id, so the store keeps one copy.
 */
public final class UpperCapture {
    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;
    private static final String STAT = "unix:dev,ino,mode,uid,gid,size,lastModifiedTime,ctime,nlink,rdev";
    private static final int S_IFMT = 0170000;
    private static final int BUFFER = 256 * 1024;
    private static final int MAX_SKIPPED_LINES = 100;
    /** overlayfs keeps these in an upper for itself; as a lower layer they would mean nothing (or harm). */
    private static final String OVERLAY_PREFIX = "overlay.";
    private static final String OPAQUE = "overlay.opaque";
    private static final String WHITEOUT_XATTR = "overlay.whiteout";

    /** Runs work while every process that may write the upper stands still (and continues them after). */
    public interface Freezer {
        void whileFrozen(Work work) throws IOException;
    }

    /** The part of a capture that needs the writer frozen. */
    public interface Work {
        void run() throws IOException;
    }

    /**
     * What one capture made.
     *
     * @param digest {@code sha256:<hex>} content id of the layer (see the class comment)
     * @param bytes bytes of regular-file content copied into the layer
     * @param entries entries in the layer
     * @param skipped what was left out, one line each
     * @param frozenNanos how long the sandbox stood frozen
     * @param twoPass whether the first pass ran while the sandbox kept running
     */
    public record Result(String digest, long bytes, long entries, List<String> skipped, long frozenNanos, boolean twoPass) {
        public Result {
            skipped = List.copyOf(skipped);
        }
    }

    enum Kind { DIR, FILE, LINK, WHITEOUT, FIFO }

    /** lstat of one source entry. */
    private record Stat(long dev, long ino, int mode, int uid, int gid, long size, FileTime mtime, FileTime ctime,
                        int nlink, long rdev) {
        int type() {
            return mode & S_IFMT;
        }

        /** Same inode, unchanged since: ctime moves on every write, chmod, chown, xattr change and rename. */
        boolean same(Stat o) {
            return o != null && dev == o.dev && ino == o.ino && ctime.equals(o.ctime) && size == o.size && mode == o.mode
                    && uid == o.uid && gid == o.gid && mtime.equals(o.mtime);
        }
    }

    /** One entry as it stands in the destination. */
    private static final class Node {
        final Kind kind;
        final Stat stat;
        byte[] sha;
        String target;
        /** Content bytes this node's copy counts against the limit (0 for a second name of a hardlink). */
        long copied;
        Map<String, byte[]> xattrs = Map.of();

        Node(Kind kind, Stat stat) {
            this.kind = kind;
            this.stat = stat;
        }
    }

    private final WhiteoutForm whiteouts;
    private final long maxBytes;

    /**
     * @param whiteouts the store's whiteout form
     * @param maxBytes most bytes of file content a layer may hold (apparent sizes: a sparse file
     *     counts fully); more fails the capture
     */
    public UpperCapture(WhiteoutForm whiteouts, long maxBytes) {
        this.whiteouts = whiteouts;
        this.maxBytes = maxBytes;
    }

    /**
     * Copies {@code upper} into {@code dest} (an existing empty directory), freezing the writer
     * through {@code freezer} for the second pass; the freezer is always thawed again.
     *
     * @throws IOException when the upper cannot be read, the destination written, or the layer
     *     exceeds {@code maxBytes}; {@code dest} may then hold a partial copy (the caller removes it)
     */
    public Result capture(Path upper, Path dest, Freezer freezer) throws IOException {
        return new Run(upper, dest).run(freezer);
    }

    private final class Run {
        private final Path upper;
        private final Path dest;
        private final NavigableMap<String, Node> nodes = new TreeMap<>();
        private final Set<String> seen = new HashSet<>();
        /** Hardlinked files copied in the frozen pass, by (dev, ino): the first name. */
        private final Map<List<Long>, String> linked = new HashMap<>();
        private final List<String> skipped = new ArrayList<>();
        private final ByteBuffer buffer = ByteBuffer.allocate(BUFFER);
        private boolean frozen;
        private long bytes;

        Run(Path upper, Path dest) {
            this.upper = upper;
            this.dest = dest;
        }

        Result run(Freezer freezer) throws IOException {
            boolean twoPass = Beneath.available();
            if (twoPass) {
                try (Beneath root = Beneath.open(upper)) {
                    walk(root, "");
                }
            }
            long[] frozenNanos = new long[1];
            freezer.whileFrozen(() -> {
                long frozenAt = System.nanoTime();
                frozen = true;
                try {
                    if (twoPass) {
                        try (Beneath root = Beneath.open(upper)) {
                            walk(root, "");
                        }
                    } else {
                        walkPlain(upper, "");
                    }
                } finally {
                    frozenNanos[0] = System.nanoTime() - frozenAt;
                }
            });
            removeStale();
            applyMetadata();
            return new Result(digest(), bytes, nodes.size(), skipped, frozenNanos[0], twoPass);
        }

        /** Walks one directory through its descriptor (see {@link Beneath}). */
        private void walk(Beneath dir, String rel) throws IOException {
            for (String name : list(dir.path())) {
                String child = rel.isEmpty() ? name : rel + "/" + name;
                Path at = dir.path().resolve(name);
                Stat s = stat(at);
                if (s == null) {
                    continue; // removed meanwhile
                }
                visit(child, at, s, () -> dir.read(name));
                if (s.type() == 0040000 && nodes.containsKey(child)) {
                    try (Beneath sub = dir.dir(name)) {
                        if (sub != null) {
                            walk(sub, child);
                        } else if (frozen) {
                            throw new IOException("cannot open directory " + child + " of a frozen layer");
                        }
                    }
                }
            }
        }

        /** The frozen-only walk over plain paths (no openat2): nothing moves, so paths are safe. */
        private void walkPlain(Path dir, String rel) throws IOException {
            for (String name : list(dir)) {
                String child = rel.isEmpty() ? name : rel + "/" + name;
                Path at = dir.resolve(name);
                Stat s = stat(at);
                if (s == null) {
                    continue;
                }
                visit(child, at, s, () -> FileChannel.open(at, StandardOpenOption.READ, NOFOLLOW));
                if (s.type() == 0040000 && nodes.containsKey(child)) {
                    walkPlain(at, child);
                }
            }
        }

        private interface Opener {
            FileChannel open() throws IOException;
        }

        private void visit(String rel, Path at, Stat s, Opener opener) throws IOException {
            if (frozen) {
                seen.add(rel);
            }
            Node old = nodes.get(rel);
            if (old != null && old.stat.same(s)) {
                return;
            }
            Kind kind = kindOf(rel, s);
            if (kind == null) {
                nodes.remove(rel);
                return;
            }
            if (!frozen && kind == Kind.FILE && s.nlink() > 1) {
                return; // hardlinks are copied while frozen, where every name of the inode is seen
            }
            Path target = dest.resolve(rel);
            if (old != null && (old.kind != kind || kind == Kind.LINK || kind == Kind.FIFO)) {
                removeTree(rel);
            }
            Node n = new Node(kind, s);
            switch (kind) {
                case DIR -> {
                    if (old == null || old.kind != Kind.DIR) {
                        Files.createDirectory(target);
                    }
                }
                case FILE -> {
                    String first = s.nlink() > 1 ? linked.get(List.of(s.dev(), s.ino())) : null;
                    if (first != null) {
                        if (old != null) {
                            bytes -= old.copied;
                        }
                        Files.deleteIfExists(target);
                        Files.createLink(target, dest.resolve(first));
                        n.sha = nodes.get(first).sha;
                    } else {
                        try (FileChannel in = opener.open()) {
                            if (in == null) {
                                if (frozen) {
                                    throw new IOException("cannot open " + rel + " of a frozen layer");
                                }
                                return; // not reachable without a symlink now: the frozen pass decides
                            }
                            n.sha = copy(rel, in, target, n);
                        }
                        if (s.nlink() > 1) {
                            linked.put(List.of(s.dev(), s.ino()), rel);
                        }
                    }
                }
                case LINK -> {
                    n.target = Files.readSymbolicLink(at).toString();
                    Files.createSymbolicLink(target, Path.of(n.target));
                }
                case WHITEOUT -> {
                    if (whiteouts == WhiteoutForm.XATTR_FILE) {
                        Files.deleteIfExists(target);
                        Files.createFile(target);
                        FileOps.setUserXattr(target, WHITEOUT_XATTR, new byte[0]);
                    } else if (old == null) {
                        FileOps.mknodWhiteout(target);
                    }
                }
                case FIFO -> FileOps.mkfifo(target, s.mode());
            }
            if (kind == Kind.DIR || kind == Kind.FILE) {
                n.xattrs = xattrs(at);
            }
            nodes.put(rel, n);
        }

        private Kind kindOf(String rel, Stat s) {
            return switch (s.type()) {
                case 0040000 -> Kind.DIR;
                case 0100000 -> Kind.FILE;
                case 0120000 -> Kind.LINK;
                case 0010000 -> Kind.FIFO;
                case 0020000 -> {
                    if (s.rdev() == 0) {
                        yield Kind.WHITEOUT;
                    }
                    skip(rel, "device node");
                    yield null;
                }
                default -> {
                    skip(rel, s.type() == 0140000 ? "socket" : "device node");
                    yield null;
                }
            };
        }

        private void skip(String rel, String why) {
            if (frozen && skipped.size() < MAX_SKIPPED_LINES && !skipped.contains(rel + ": " + why)) {
                skipped.add(rel + ": " + why);
            }
        }

        /** Copies one file's content, hashing it; counts against the byte limit. */
        private byte[] copy(String rel, FileChannel in, Path target, Node n) throws IOException {
            MessageDigest sha = sha256();
            Node old = nodes.get(rel);
            long base = bytes - (old == null ? 0 : old.copied);
            long copied = 0;
            try (FileChannel out = FileChannel.open(target, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING, NOFOLLOW)) {
                buffer.clear();
                while (in.read(buffer) >= 0) {
                    buffer.flip();
                    copied += buffer.remaining();
                    if (base + copied > maxBytes) {
                        throw new IOException("the writable layer holds more than the limit of " + maxBytes
                                + " bytes (reached at " + rel + ")");
                    }
                    sha.update(buffer.array(), 0, buffer.limit());
                    while (buffer.hasRemaining()) {
                        out.write(buffer);
                    }
                    buffer.clear();
                }
            }
            bytes = base + copied;
            n.copied = copied;
            return sha.digest();
        }

        /** Deletes from the destination what the frozen pass no longer saw. */
        private void removeStale() throws IOException {
            for (String rel : new ArrayList<>(nodes.descendingKeySet())) {
                if (!seen.contains(rel) && nodes.containsKey(rel)) {
                    removeTree(rel);
                }
            }
        }

        private void removeTree(String rel) throws IOException {
            Node n = nodes.remove(rel);
            if (n != null) {
                bytes -= n.copied;
            }
            NavigableMap<String, Node> below = nodes.subMap(rel + "/", true, rel + "0", false); // '0' follows '/'
            for (Node c : below.values()) {
                bytes -= c.copied;
            }
            below.clear();
            Trees.deleteRecursively(dest.resolve(rel));
        }

        /** Owners, modes, xattrs and times, children before their directory (its mtime last). */
        private void applyMetadata() throws IOException {
            Set<String> withWhiteouts = new HashSet<>();
            for (Map.Entry<String, Node> e : nodes.entrySet()) {
                if (e.getValue().kind == Kind.WHITEOUT) {
                    int slash = e.getKey().lastIndexOf('/');
                    withWhiteouts.add(slash < 0 ? "" : e.getKey().substring(0, slash));
                }
            }
            for (Map.Entry<String, Node> e : nodes.descendingMap().entrySet()) {
                Path p = dest.resolve(e.getKey());
                Node n = e.getValue();
                Stat s = n.stat;
                FileOps.chown(p, s.uid(), s.gid());
                switch (n.kind) {
                    case LINK -> FileOps.mtime(p, s.mtime());
                    case FIFO -> { } // mkfifo set the mode; a FIFO's time is not worth a process
                    case WHITEOUT -> FileOps.mtime(p, s.mtime());
                    default -> {
                        FileOps.chmod(p, s.mode());
                        Map<String, byte[]> want = new TreeMap<>(n.xattrs);
                        if (n.kind == Kind.DIR && whiteouts == WhiteoutForm.XATTR_FILE && withWhiteouts.contains(e.getKey())
                                && !Arrays.equals(want.get(OPAQUE), "y".getBytes(StandardCharsets.US_ASCII))) {
                            want.put(OPAQUE, "x".getBytes(StandardCharsets.US_ASCII));
                        }
                        setXattrs(p, want);
                        if (n.kind == Kind.DIR) {
                            n.xattrs = want; // the digest covers the marker the layer carries
                        }
                        FileOps.mtime(p, s.mtime());
                    }
                }
            }
            if (whiteouts == WhiteoutForm.XATTR_FILE && withWhiteouts.contains("")) {
                FileOps.setUserXattr(dest, OPAQUE, "x");
            }
        }

        private String digest() {
            MessageDigest sha = sha256();
            HexFormat hex = HexFormat.of();
            StringBuilder line = new StringBuilder();
            for (Map.Entry<String, Node> e : nodes.entrySet()) {
                Node n = e.getValue();
                Stat s = n.stat;
                line.setLength(0);
                line.append(e.getKey()).append('\0').append(n.kind).append('\0').append(Integer.toOctalString(s.mode()))
                        .append('\0').append(s.uid()).append(':').append(s.gid()).append('\0')
                        .append(s.mtime().toInstant()).append('\0');
                if (n.kind == Kind.FILE) {
                    line.append(s.size()).append('\0').append(hex.formatHex(n.sha));
                } else if (n.kind == Kind.LINK) {
                    line.append(n.target);
                }
                for (Map.Entry<String, byte[]> x : new TreeMap<>(n.xattrs).entrySet()) {
                    line.append('\0').append(x.getKey()).append('=').append(hex.formatHex(x.getValue()));
                }
                line.append('\n');
                sha.update(line.toString().getBytes(StandardCharsets.UTF_8));
            }
            return "sha256:" + hex.formatHex(sha.digest());
        }
    }

    private static List<String> list(Path dir) throws IOException {
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
            for (Path p : s) {
                names.add(p.getFileName().toString());
            }
        } catch (NoSuchFileException e) {
            return List.of();
        }
        names.sort(null);
        return names;
    }

    private static Stat stat(Path p) throws IOException {
        Map<String, Object> a;
        try {
            a = Files.readAttributes(p, STAT, NOFOLLOW);
        } catch (NoSuchFileException e) {
            return null;
        }
        return new Stat((Long) a.get("dev"), (Long) a.get("ino"), (Integer) a.get("mode"), (Integer) a.get("uid"),
                (Integer) a.get("gid"), (Long) a.get("size"), (FileTime) a.get("lastModifiedTime"), (FileTime) a.get("ctime"),
                (Integer) a.get("nlink"), (Long) a.get("rdev"));
    }

    /** The entry's {@code user.*} xattrs without overlayfs' bookkeeping (the opaque marker stays). */
    private static Map<String, byte[]> xattrs(Path p) throws IOException {
        UserDefinedFileAttributeView v = Files.getFileAttributeView(p, UserDefinedFileAttributeView.class, NOFOLLOW);
        Map<String, byte[]> out = new TreeMap<>();
        for (String name : v.list()) {
            if (name.startsWith(OVERLAY_PREFIX) && !(name.equals(OPAQUE))) {
                continue;
            }
            ByteBuffer b = ByteBuffer.allocate(v.size(name));
            v.read(name, b);
            byte[] value = b.array();
            if (name.equals(OPAQUE) && !Arrays.equals(value, "y".getBytes(StandardCharsets.US_ASCII))) {
                continue; // only "y" is the kernel's own opaque marker; "x" is recomputed from whiteouts
            }
            out.put(name, value);
        }
        return out;
    }

    private static void setXattrs(Path p, Map<String, byte[]> want) throws IOException {
        UserDefinedFileAttributeView v = Files.getFileAttributeView(p, UserDefinedFileAttributeView.class, NOFOLLOW);
        for (String name : v.list()) {
            if (!want.containsKey(name)) {
                v.delete(name);
            }
        }
        for (Map.Entry<String, byte[]> x : want.entrySet()) {
            v.write(x.getKey(), ByteBuffer.wrap(x.getValue()));
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
