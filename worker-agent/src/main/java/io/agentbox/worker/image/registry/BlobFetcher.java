package io.agentbox.worker.image.registry;

import io.agentbox.protocol.image.ImageReference;
import io.agentbox.worker.image.Descriptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Semaphore;
import java.util.function.LongConsumer;

/**
 * Downloads one blob into {@code <target>.partial}, hashing exactly the bytes written, and
 * renames it to {@code target} once size and SHA-256 match. A cut connection is resumed with
 * {@code Range: bytes=N-}; only a 206 whose {@code Content-Range} starts at N is appended,
 * anything else starts the blob over. Attempts in a row that bring no new bytes are bounded by
 * {@code limits.maxAttempts}, so the loop ends: every other attempt moves closer to the size.
 */
final class BlobFetcher {
    static final int BUFFER_BYTES = 64 * 1024;

    private final RegistryHttp http;
    private final RegistryConfig config;
    private final ConcurrentMap<String, Semaphore> perRegistry = new ConcurrentHashMap<>();

    BlobFetcher(RegistryHttp http, RegistryConfig config) {
        this.http = http;
        this.config = config;
    }

    void fetch(ImageReference ref, Descriptor blob, Path target, LongConsumer progress) throws IOException {
        String what = "blob " + blob.digest() + " of image " + ref;
        if (!Digests.isSha256(blob.digest())) {
            throw new UnsupportedManifestException("blob '" + blob.digest() + "' of image " + ref
                    + ": digest is not sha256: and 64 lowercase hex digits");
        }
        if (blob.size() < 0) {
            throw new UnsupportedManifestException(what + ": negative size " + blob.size());
        }
        Path partial = target.resolveSibling(target.getFileName() + ".partial");
        Semaphore slots = perRegistry.computeIfAbsent(RegistryConfig.key(ref.registry()),
                k -> new Semaphore(config.limits().maxBlobDownloadsPerRegistry(), true));
        try {
            slots.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException(what + ": interrupted while waiting for a download slot");
        }
        boolean done = false;
        try {
            try (FileChannel out = FileChannel.open(partial, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                download(ref, blob, what, out, partial, progress);
                out.force(false);
            }
            try {
                Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING);
            }
            done = true;
        } finally {
            slots.release();
            if (!done) {
                Files.deleteIfExists(partial);
            }
        }
    }

    private void download(ImageReference ref, Descriptor blob, String what, FileChannel out, Path partial,
                          LongConsumer progress) throws IOException {
        MessageDigest sha = Digests.sha256();
        long size = blob.size();
        long have = 0;
        int barren = 0; // attempts in a row without a new byte
        IOException lastCut = null;
        byte[] buf = new byte[BUFFER_BYTES];
        while (true) {
            long before = have;
            boolean restart = false;
            try (HttpTransport.Reply reply = http.get(ref, what, "blobs/" + blob.digest(),
                    have > 0 ? Map.of("Range", "bytes=" + have + "-") : Map.of(), true)) {
                if (have > 0 && !(reply.status() == 206 && rangeStartsAt(reply.header("Content-Range"), have))) {
                    // the registry ignored or misread the range: start from byte 0
                    out.truncate(0);
                    out.position(0);
                    sha.reset();
                    have = 0;
                    before = 0;
                    restart = reply.status() != 200;
                } else if (have == 0 && reply.status() != 200) {
                    throw new RegistryException(what + ": registry " + ref.registry() + " answered " + reply.status()
                            + " to a request without Range", reply.status(), null);
                }
                if (!restart) {
                    long length = reply.contentLength();
                    if (length >= 0 && have + length > size) {
                        throw new DigestMismatchException(what + ": registry sends " + (have + length)
                                + " bytes, the manifest says " + size);
                    }
                    InputStream in = reply.body();
                    while (true) {
                        int n;
                        try {
                            n = in.read(buf);
                        } catch (IOException cut) {
                            lastCut = cut;
                            break;
                        }
                        if (n < 0) {
                            if (have < size) {
                                lastCut = new IOException("connection closed after " + have + " of " + size + " bytes");
                            }
                            break;
                        }
                        if (have + n > size) {
                            throw new DigestMismatchException(what + ": registry sends more than the " + size
                                    + " bytes the manifest says");
                        }
                        sha.update(buf, 0, n);
                        write(out, buf, n, partial, what);
                        have += n;
                        progress.accept(n);
                    }
                }
            } catch (RegistryUnreachableException e) {
                lastCut = e;
            } catch (RegistryException e) {
                if (e.status() < 500 || e instanceof DigestMismatchException) {
                    throw e;
                }
                lastCut = e;
            }
            if (have == size && !restart) {
                break;
            }
            barren = have > before ? 0 : barren + 1;
            if (barren >= config.limits().maxAttempts()) {
                throw new RegistryException(what + ": download failed after " + barren + " attempts without progress ("
                        + have + " of " + size + " bytes): " + (lastCut == null ? "registry refused to resume" : lastCut.getMessage()),
                        lastCut);
            }
            if (barren > 0) {
                RegistryHttp.sleep(RetryWait.delay(barren, null, config.limits().maxBackoff()));
            }
        }
        String got = Digests.format(sha.digest());
        if (!got.equals(blob.digest())) {
            throw new DigestMismatchException(what + ": digest mismatch, got " + got);
        }
    }

    /** Whether {@code Content-Range: bytes N-M/T} starts at {@code offset} (RFC 9110 section 14.4). */
    static boolean rangeStartsAt(String contentRange, long offset) {
        if (contentRange == null) {
            return false;
        }
        String v = contentRange.trim();
        String prefix = "bytes " + offset + "-";
        return v.startsWith(prefix) && v.length() > prefix.length() && Character.isDigit(v.charAt(prefix.length()));
    }

    private static void write(FileChannel out, byte[] buf, int n, Path partial, String what) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(buf, 0, n);
        try {
            while (b.hasRemaining()) {
                out.write(b);
            }
        } catch (IOException e) {
            throw new RegistryException(what + ": cannot write " + partial + ": " + e.getMessage(), e);
        }
    }
}
