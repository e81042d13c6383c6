package io.agentbox.wsproxy.blobs;

import io.agentbox.protocol.image.BlobStreams;
import java.io.BufferedOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The hub's image blobs (layers, configs, manifests of built templates), content-addressed under
 * one directory:
 *
 * <pre>
 *   sha256/&lt;hex&gt;   a blob whose SHA-256 is &lt;hex&gt;, complete and checked
 *   tmp/&lt;n&gt;        a blob being written; emptied at open
 * </pre>
 *
 * <p>{@link #put} writes to {@code tmp/}, checks size and SHA-256 of exactly the bytes written, and
 * renames the file into place; a blob already held is not written again (the same digest is the
 * same bytes). So a reader of {@code sha256/} sees only whole, checked blobs, and a crash leaves
 * only {@code tmp/} files.
 *
 * <p>Collection: {@link #retainOnly} removes every blob outside the caller's set except blobs
 * being written and blobs {@linkplain #pin pinned} (a copy whose owner is not recorded yet).
 *
 * <p>Thread-safe within one JVM (one hub owns its data directory).
 */
public final class BlobStore {
    /** The largest blob the hub keeps: 64 GiB (a layer beyond that is a mistake, not an image). */
    public static final long MAX_BLOB_BYTES = 64L << 30;

    private final Path root;
    private final AtomicLong tmpCounter = new AtomicLong();
    /** Guarded by this: digests pinned (with a count) or being written. */
    private final Map<String, Integer> pins = new HashMap<>();

    private BlobStore(Path root) {
        this.root = root;
    }

    /**
     * Opens (creating) the store in {@code dir}; removes what an earlier process left in {@code tmp/}.
     *
     * @throws IOException when the directories cannot be made
     */
    public static BlobStore open(Path dir) throws IOException {
        Path root = dir.toAbsolutePath().normalize();
        Files.createDirectories(root.resolve("sha256"));
        Path tmp = Files.createDirectories(root.resolve("tmp"));
        try (Stream<Path> s = Files.list(tmp)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                Files.deleteIfExists(p);
            }
        }
        return new BlobStore(root);
    }

    /** Whether the store holds blob {@code digest} (false for a malformed digest). */
    public boolean has(String digest) {
        return BlobStreams.isDigest(digest) && Files.isRegularFile(file(digest));
    }

    /** The file of blob {@code digest} (read it, never write it), or empty. */
    public Optional<Path> path(String digest) {
        return has(digest) ? Optional.of(file(digest)) : Optional.empty();
    }

    /** The size of blob {@code digest}, or -1 when the store does not hold it. */
    public long size(String digest) throws IOException {
        Optional<Path> p = path(digest);
        return p.isPresent() ? Files.size(p.get()) : -1;
    }

    /** Writes a blob's bytes to the stream it is given. */
    @FunctionalInterface
    public interface Source {
        void writeTo(OutputStream out) throws IOException;
    }

    /**
     * Stores blob {@code digest} of {@code size} bytes from {@code source}, unless the store holds
     * it already (then {@code source} is not called).
     *
     * @return true when this call wrote the blob, false when it was there
     * @throws IOException when the digest is malformed, the size negative or above
     *     {@link #MAX_BLOB_BYTES}, the source writes more or fewer bytes than {@code size} or bytes
     *     of another digest, or the disk fails; nothing is left behind then
     */
    public boolean put(String digest, long size, Source source) throws IOException {
        if (!BlobStreams.isDigest(digest)) {
            throw new IOException("blob digest '" + digest + "' is not sha256: and 64 lowercase hex digits");
        }
        if (size < 0 || size > MAX_BLOB_BYTES) {
            throw new IOException("blob " + digest + ": size " + size + " is outside 0.." + MAX_BLOB_BYTES);
        }
        if (has(digest)) {
            return false;
        }
        Path tmp = root.resolve("tmp").resolve(Long.toString(tmpCounter.incrementAndGet()));
        pinOne(digest);
        try {
            MessageDigest sha = BlobStreams.sha256();
            Checked checked;
            try (OutputStream file = new BufferedOutputStream(Files.newOutputStream(tmp), 1 << 16)) {
                checked = new Checked(file, sha, size, digest);
                source.writeTo(checked);
                checked.flush();
            }
            if (checked.written != size) {
                throw new IOException("blob " + digest + ": " + checked.written + " bytes written, " + size + " expected");
            }
            String actual = BlobStreams.digestOf(sha);
            if (!actual.equals(digest)) {
                throw new IOException("blob " + digest + ": digest mismatch: the bytes hash to " + actual);
            }
            try {
                Files.move(tmp, file(digest), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                throw new IOException("blob store: tmp/ and sha256/ must be on one file system", e);
            }
            return true;
        } finally {
            Files.deleteIfExists(tmp);
            unpin(List.of(digest));
        }
    }

    /** Blobs that stay through {@link #retainOnly} until the pin is closed. */
    public final class Pin implements AutoCloseable {
        private final List<String> digests;
        private boolean closed;

        private Pin(List<String> digests) {
            this.digests = digests;
        }

        @Override
        public void close() {
            synchronized (BlobStore.this) {
                if (closed) {
                    return;
                }
                closed = true;
            }
            unpin(digests);
        }
    }

    /** Keeps {@code digests} through collections until the returned pin is closed (pins count). */
    public Pin pin(Collection<String> digests) {
        List<String> list = List.copyOf(digests);
        list.forEach(this::pinOne);
        return new Pin(list);
    }

    private synchronized void pinOne(String digest) {
        pins.merge(digest, 1, Integer::sum);
    }

    private synchronized void unpin(List<String> digests) {
        for (String d : digests) {
            pins.computeIfPresent(d, (k, n) -> n == 1 ? null : n - 1);
        }
    }

    /**
     * What a {@link #retainOnly} removed.
     *
     * @param blobs blobs deleted
     * @param bytes their size
     */
    public record Removed(int blobs, long bytes) {}

    /**
     * Deletes every blob not in {@code keep}, except pinned ones and ones being written.
     * The caller computes {@code keep} from its records; a blob a new record names after the
     * caller read its records must be pinned until that record exists.
     */
    public synchronized Removed retainOnly(Set<String> keep) throws IOException {
        int blobs = 0;
        long bytes = 0;
        try (Stream<Path> s = Files.list(root.resolve("sha256"))) {
            for (Path p : (Iterable<Path>) s::iterator) {
                String digest = "sha256:" + p.getFileName();
                if (!keep.contains(digest) && !pins.containsKey(digest)) {
                    long size = Files.size(p);
                    if (Files.deleteIfExists(p)) {
                        blobs++;
                        bytes += size;
                    }
                }
            }
        }
        return new Removed(blobs, bytes);
    }

    /** Every digest the store holds. */
    public Set<String> digests() throws IOException {
        try (Stream<Path> s = Files.list(root.resolve("sha256"))) {
            return s.map(p -> "sha256:" + p.getFileName()).filter(BlobStreams::isDigest)
                    .collect(Collectors.toUnmodifiableSet());
        }
    }

    private Path file(String digest) {
        return root.resolve("sha256").resolve(digest.substring("sha256:".length()));
    }

    /** Counts and hashes what passes, and refuses bytes beyond the announced size. */
    private static final class Checked extends FilterOutputStream {
        private final MessageDigest sha;
        private final long limit;
        private final String digest;
        long written;

        Checked(OutputStream out, MessageDigest sha, long limit, String digest) {
            super(out);
            this.sha = sha;
            this.limit = limit;
            this.digest = digest;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (written + len > limit) {
                throw new IOException("blob " + digest + ": more than the " + limit + " bytes expected");
            }
            out.write(b, off, len);
            sha.update(b, off, len);
            written += len;
        }
    }
}
