package io.agentbox.worker.image;

import io.agentbox.protocol.image.ImageReference;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongConsumer;

/**
 * An {@link ImageSource} over {@link TestImages} held in memory, checking digests as a registry
 * client must. Counts fetches per digest and can hold a blob's fetch back for a while (to make
 * concurrent pulls overlap).
 */
public final class MemoryImageSource implements ImageSource {
    private final List<TestImages.Image> images;
    private final Map<String, byte[]> blobs;
    private final Map<String, AtomicInteger> fetches = new ConcurrentHashMap<>();
    private final Map<String, Long> delaysMillis = new ConcurrentHashMap<>();

    MemoryImageSource(List<TestImages.Image> images) {
        this.images = List.copyOf(images);
        this.blobs = TestImages.blobs(images);
    }

    /** Makes every fetch of {@code digest} take at least {@code millis}. */
    public MemoryImageSource delay(String digest, long millis) {
        delaysMillis.put(digest, millis);
        return this;
    }

    /** How many times {@code digest} was fetched. */
    public int fetches(String digest) {
        AtomicInteger n = fetches.get(digest);
        return n == null ? 0 : n.get();
    }

    @Override
    public ResolvedImage resolve(ImageReference ref) throws IOException {
        for (TestImages.Image i : images) {
            if (i.name().equals(ref.toString())) {
                return i.resolved();
            }
        }
        throw new IOException("image " + ref + ": not found (the source has " + TestImages.names(images) + ")");
    }

    @Override
    public void fetchBlob(ImageReference ref, Descriptor blob, Path target, LongConsumer progress) throws IOException {
        fetches.computeIfAbsent(blob.digest(), d -> new AtomicInteger()).incrementAndGet();
        byte[] data = blobs.get(blob.digest());
        if (data == null) {
            throw new IOException("blob " + blob.digest() + ": not found");
        }
        Long delay = delaysMillis.get(blob.digest());
        if (delay != null) {
            try {
                Thread.sleep(delay);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
        }
        if (!LayerTar.sha256(data).equals(blob.digest()) || data.length != blob.size()) {
            throw new IOException("blob " + blob.digest() + ": digest or size mismatch");
        }
        Files.write(target, data);
        progress.accept(data.length);
    }
}
