package io.agentbox.worker.snapshot;

import io.agentbox.mux.util.DaemonThreads;
import io.agentbox.protocol.ErrorReason;
import io.agentbox.protocol.v1.ExportedSnapshot;
import io.agentbox.protocol.v1.SnapshotInfo;
import io.agentbox.worker.image.ImageConfig;
import io.agentbox.worker.image.SandboxImage;
import io.agentbox.worker.image.store.ImageStore;
import io.agentbox.worker.image.store.Lease;
import io.agentbox.worker.image.store.StoredImage;
import io.agentbox.worker.image.unpack.UpperCapture;
import io.agentbox.worker.pool.ClaimedSandbox;
import io.agentbox.worker.pool.SandboxPools;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Snapshots of this worker's sandboxes (sandbox.proto CreateSnapshot / DeleteSnapshot): the
 * runtime copies the sandbox's writable layer into a work directory of the {@link ImageStore},
 * the store keeps it as a content-addressed layer ({@code layers/<digest>}) and records a
 * snapshot image (the sandbox's image layers + that layer + the image's config, or the host's
 * root + that layer for a sandbox without an image) under the snapshot id. A template whose
 * {@code snapshot} field names the id starts sandboxes from it ({@code StoreTemplateImages}).
 * {@link #export} gives a snapshot an OCI image form the hub copies, so other clusters run it.
 *
 * <p>Deleting a snapshot forgets its name at once; its image record and the layers only it used
 * are collected by the store's GC, which never removes a layer a live sandbox (idle in a pool or
 * claimed) runs on: this service runs that collection after each delete and then every
 * {@link #COLLECT_INTERVAL_S} seconds while a deleted snapshot may still hold layers.
 */
public final class Snapshots implements AutoCloseable {
    static final long COLLECT_INTERVAL_S = 60;
    private static final Logger log = LoggerFactory.getLogger(Snapshots.class);

    private final SandboxPools pools;
    private final ImageStore store;
    private final ScheduledExecutorService collector = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("snapshot-gc"));
    private volatile boolean deletedSome;
    private final Object exporting = new Object();

    public Snapshots(SandboxPools pools, ImageStore store) {
        this.pools = pools;
        this.store = store;
        collector.scheduleWithFixedDelay(() -> {
            if (deletedSome) {
                collect();
            }
        }, COLLECT_INTERVAL_S, COLLECT_INTERVAL_S, TimeUnit.SECONDS);
    }

    public ImageStore store() {
        return store;
    }

    /**
     * Snapshots claimed sandbox {@code sandboxId} as {@code snapshotId} (see the class comment).
     *
     * @throws StatusRuntimeException NOT_FOUND (SANDBOX_NOT_FOUND), INVALID_ARGUMENT for a bad id,
     *     FAILED_PRECONDITION when the sandbox's image is not from this store, UNIMPLEMENTED for a
     *     runtime without snapshots, INTERNAL when writing the layer fails
     */
    public SnapshotInfo create(String sandboxId, String snapshotId) {
        long started = System.nanoTime();
        if (snapshotId == null || !snapshotId.matches("[A-Za-z0-9][A-Za-z0-9._/:-]{0,255}")) {
            throw Status.INVALID_ARGUMENT.withDescription("invalid snapshot id '" + snapshotId
                    + "': letters, digits and . _ / : - (at most 256)").asRuntimeException();
        }
        ClaimedSandbox c;
        try {
            c = pools.get(sandboxId);
        } catch (StatusRuntimeException e) {
            throw ErrorReason.SANDBOX_NOT_FOUND.exception(Status.Code.NOT_FOUND, e.getStatus().getDescription());
        }
        Optional<SandboxImage> source = c.runtime().image();
        List<String> below = new ArrayList<>();
        try {
            if (source.isPresent()) {
                for (Path layer : source.get().layers()) {
                    below.add(store.diffIdOf(layer).orElseThrow(() -> Status.FAILED_PRECONDITION.withDescription(
                            "sandbox " + sandboxId + " runs on a layer that is not in this worker's image store ("
                                    + layer + ")").asRuntimeException()));
                }
            }
            Path work = store.newLayerWork();
            UpperCapture.Result r;
            String digest;
            try (Lease lease = store.lease()) {
                try {
                    r = c.exclusive(() -> c.runtime().captureWritableLayer(work.resolve("root"), store.whiteoutForm()));
                    digest = store.commitLayer(lease, work, r.digest(), r.bytes(), r.entries(), r.skipped());
                } catch (IOException | RuntimeException e) {
                    store.discard(work);
                    throw e;
                }
                List<String> layers = new ArrayList<>(below);
                layers.add(digest);
                boolean onBuiltInRoot = source.isEmpty() || source.get().onBuiltInRoot();
                ImageConfig config = source.map(SandboxImage::config).orElse(ImageConfig.EMPTY);
                store.recordSnapshot(snapshotId, layers, config, onBuiltInRoot);
            }
            long tookMs = (System.nanoTime() - started) / 1_000_000;
            log.info("snapshot {} of sandbox {}: layer {} ({} bytes, {} entries), frozen {} us, {} ms in all{}",
                    snapshotId, sandboxId, digest, r.bytes(), r.entries(), r.frozenNanos() / 1000, tookMs,
                    r.skipped().isEmpty() ? "" : "; left out " + r.skipped());
            return SnapshotInfo.newBuilder().setSnapshotId(snapshotId).setLayerDigest(digest).setLayerBytes(r.bytes())
                    .setLayerEntries(r.entries()).setFrozenUs(r.frozenNanos() / 1000).setTookMs(tookMs)
                    .setTemplate(c.templateName()).build();
        } catch (IOException e) {
            throw Status.INTERNAL.withDescription("snapshot " + snapshotId + " of sandbox " + sandboxId + " failed: "
                    + e.getMessage()).asRuntimeException();
        } catch (IllegalArgumentException e) {
            throw Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException();
        }
    }

    /** The image of {@code snapshotId}, when this worker has it. */
    public Optional<StoredImage> find(String snapshotId) {
        try {
            return store.findSnapshot(snapshotId);
        } catch (IOException e) {
            throw Status.INTERNAL.withDescription("cannot read snapshot " + snapshotId + ": " + e.getMessage()).asRuntimeException();
        }
    }

    /**
     * Gives snapshot {@code snapshotId} its OCI image form ({@link SnapshotExport}); one export at a
     * time on this worker (each is mostly compressing).
     *
     * @throws StatusRuntimeException NOT_FOUND (SNAPSHOT_NOT_FOUND) when this worker has no such
     *     snapshot, INTERNAL when writing a layer fails or the snapshot was deleted meanwhile
     */
    public ExportedSnapshot export(String snapshotId) {
        synchronized (exporting) {
            try {
                ExportedSnapshot e = SnapshotExport.export(store, snapshotId).orElseThrow(() ->
                        ErrorReason.SNAPSHOT_NOT_FOUND.exception(Status.Code.NOT_FOUND, "snapshot '" + snapshotId
                                + "' not found on this worker"));
                if (e.getLayersWritten() > 0) {
                    log.info("snapshot {}: exported as {} ({} layer(s) written, {} bytes of layers, {} ms)", snapshotId,
                            e.getManifestDigest(), e.getLayersWritten(), e.getLayerBytes(), e.getTookMs());
                }
                return e;
            } catch (IOException e) {
                throw Status.INTERNAL.withDescription("exporting snapshot " + snapshotId + " failed: " + e.getMessage())
                        .asRuntimeException();
            }
        }
    }

    /**
     * Forgets {@code snapshotId} and collects what it alone held (layers in use stay until their
     * sandboxes end).
     *
     * @throws StatusRuntimeException NOT_FOUND (SNAPSHOT_NOT_FOUND) when this worker has no such snapshot
     */
    public void delete(String snapshotId) {
        boolean removed;
        try {
            removed = store.removeSnapshot(snapshotId);
        } catch (IOException e) {
            throw Status.INTERNAL.withDescription("cannot delete snapshot " + snapshotId + ": " + e.getMessage()).asRuntimeException();
        }
        if (!removed) {
            throw ErrorReason.SNAPSHOT_NOT_FOUND.exception(Status.Code.NOT_FOUND, "snapshot '" + snapshotId
                    + "' not found on this worker");
        }
        deletedSome = true;
        if (!collector.isShutdown()) {
            collector.execute(this::collect);
        }
    }

    /**
     * Removes the images of deleted snapshots and every layer no image needs and no live sandbox
     * runs on; template images (named by a reference) are left to their own collection.
     */
    public ImageStore.GcResult collect() {
        try {
            ImageStore.GcResult r = store.gcReleased(Set.of());
            if (r.images() > 0 || r.layers() > 0) {
                log.info("snapshots: removed {} image record(s) and {} layer(s) no snapshot or sandbox uses", r.images(), r.layers());
            }
            return r;
        } catch (IOException | RuntimeException e) {
            log.warn("collecting deleted snapshots failed: {}", e.toString());
            return new ImageStore.GcResult(0, 0, 0, 0);
        }
    }

    @Override
    public void close() {
        collector.shutdownNow();
    }
}
