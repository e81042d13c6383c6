package io.agentbox.worker.image.store;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Blobs and layer directories held against the store's GC while an image is made from them
 * and not yet recorded (a template build between its steps, a snapshot between its capture and
 * its record). From {@link ImageStore#lease()}; {@link #close} lets GC have them again. Holds are
 * per JVM: GC run by another process (the CLI) does not see them.
 *
 * <p>A hold taken while GC runs waits for that GC to finish, so a caller that checks a blob or
 * layer after holding it sees what GC left, and no later GC removes it. Thread-safe.
 */
public final class Lease implements AutoCloseable {
    private final Leases leases;
    private final List<String> blobs = new ArrayList<>();
    private final List<String> layers = new ArrayList<>();
    private boolean closed;

    Lease(Leases leases) {
        this.leases = leases;
    }

    /** Holds {@code layer}'s blob and its unpacked directory. */
    public void hold(StoredImage.Layer layer) throws IOException {
        hold(layer.digest(), layer.diffId());
    }

    /**
     * Holds the blob {@code blobDigest} and the layer directory {@code diffId}; either may be null.
     *
     * @throws IOException when the store's lock cannot be taken
     * @throws IllegalStateException after {@link #close}
     */
    public synchronized void hold(String blobDigest, String diffId) throws IOException {
        if (closed) {
            throw new IllegalStateException("lease closed");
        }
        leases.add(blobDigest, diffId);
        if (blobDigest != null) {
            blobs.add(blobDigest);
        }
        if (diffId != null) {
            layers.add(diffId);
        }
    }

    /** Releases every hold; idempotent. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            leases.remove(blobs, layers);
        }
    }
}
