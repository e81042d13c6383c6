package io.agentbox.manager.builds;

import io.agentbox.manager.routing.ClusterRouter;
import io.agentbox.manager.store.SnapshotStore;
import io.agentbox.manager.store.SnapshotStore.Snap;
import io.agentbox.protocol.image.ImageReference;
import io.agentbox.protocol.v1.ExportedSnapshot;
import io.agentbox.protocol.v1.SnapshotRef;
import io.agentbox.protocol.v1.ImageServiceGrpc;
import io.agentbox.wsproxy.blobs.BlobStore;
import io.grpc.Channel;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Snapshots on every cluster (docs/snapshots-and-reset.md, "Across clusters"): after a snapshot is
 * recorded, {@link #start} runs in the background
 *
 * <ol>
 *   <li>{@code ImageService.ExportSnapshot} on the worker that made it (an OCI image of the
 *       snapshot in that worker's store, tar blobs written for layers that had none);</li>
 *   <li>the copy of every blob of that image the hub lacks, as after a template build
 *       ({@link BuiltBlobs#copy}: manifest, config, layers over {@code ReadImageBlob}, each checked);</li>
 *   <li>{@link SnapshotStore#serveFromHub}: the snapshot's template gets the image
 *       {@code builds.agentbox.internal/snapshots/<template>@<manifest digest>} and every cluster, so a
 *       worker of another cluster pulls it from the hub ({@code HubImageSource}).</li>
 * </ol>
 *
 * <p>Until step 3 the template stays pinned to the source cluster, so creates keep working there
 * (no wait on the copy). A copy that fails (worker gone, digest mismatch, snapshot deleted
 * meanwhile) is logged and leaves the snapshot on its cluster. The copy's blobs are pinned until the
 * template names them, and a snapshot deleted meanwhile has its blobs collected when the copy ends.
 * A fork's snapshot is not copied: it is deleted as soon as the forks, made on the same cluster, start.
 *
 * <p>Limits: {@link #THREADS} copies at a time, {@link #MAX_QUEUED} waiting (more are dropped with a
 * warning: those snapshots stay on their cluster); the export may take {@link #EXPORT_DEADLINE_MINUTES}.
 */
public final class SnapshotCopies {
    static final int THREADS = 2;
    static final int MAX_QUEUED = 256;
    static final long EXPORT_DEADLINE_MINUTES = 60;
    /** Repository of snapshot copies under {@link ImageReference#BUILDS_REGISTRY}. */
    public static final String REPOSITORY = "snapshots";
    private static final Logger log = LoggerFactory.getLogger(SnapshotCopies.class);

    private final TemplateBuilds builds;
    private final BuiltBlobs blobs;
    private final ClusterRouter router;
    private final SnapshotStore snapshots;
    private final Executor executor;

    SnapshotCopies(TemplateBuilds builds, BuiltBlobs blobs, ClusterRouter router, SnapshotStore snapshots, Executor executor) {
        this.builds = builds;
        this.blobs = blobs;
        this.router = router;
        this.snapshots = snapshots;
        this.executor = executor;
    }

    /** The image reference of the hub's copy of the snapshot served by template {@code templateName}. */
    public static String imageReference(String templateName, String manifestDigest) {
        return ImageReference.BUILDS_REGISTRY + "/" + REPOSITORY + "/" + templateName + "@" + manifestDigest;
    }

    /** Copies {@code snap} to the hub in the background (see the class comment); first collects blobs no snapshot needs. */
    public void start(Snap snap) {
        try {
            executor.execute(() -> {
                builds.collectBlobs(); // a snapshot this one replaced leaves blobs behind
                copy(snap);
            });
        } catch (RejectedExecutionException e) {
            log.warn("snapshot {}: {} copies wait already; it stays on cluster {}", snap.snapshotId(), MAX_QUEUED,
                    snap.clusterId());
        }
    }

    /** Removes the hub blobs of deleted snapshots (and of deleted templates), now. */
    public void collect() {
        builds.collectBlobs();
    }

    /** Steps 1–3 of the class comment; true when the snapshot now runs on every cluster. */
    boolean copy(Snap snap) {
        long started = System.nanoTime();
        Channel worker = router.channel(snap.clusterId());
        if (worker == null) {
            log.warn("snapshot {}: cluster {} is not connected; it stays there", snap.snapshotId(), snap.clusterId());
            return false;
        }
        ExportedSnapshot exported;
        BlobStore.Pin pin;
        try {
            exported = ImageServiceGrpc.newBlockingStub(worker).withDeadlineAfter(EXPORT_DEADLINE_MINUTES, TimeUnit.MINUTES)
                    .exportSnapshot(SnapshotRef.newBuilder().setSnapshotId(snap.templateName()).build());
            pin = blobs.copy(worker, exported.getManifestDigest(), line -> log.debug("snapshot {}: {}", snap.snapshotId(), line));
        } catch (StatusRuntimeException | IOException e) {
            log.warn("snapshot {}: copying it to the hub failed; it stays on cluster {}: {}", snap.snapshotId(),
                    snap.clusterId(), e.getMessage());
            return false;
        }
        boolean served;
        try {
            served = snapshots.serveFromHub(snap, imageReference(snap.templateName(), exported.getManifestDigest()));
        } catch (RuntimeException e) {
            log.warn("snapshot {}: recording the hub's copy failed: {}", snap.snapshotId(), e.toString());
            served = false;
        } finally {
            builds.releaseRecorded(pin); // the template names the image now (or never will)
        }
        if (!served) {
            builds.collectBlobs(); // deleted or replaced while it was copied
            return false;
        }
        log.info("snapshot {}: copied to the hub as {} ({} bytes of layers, {} written by the worker) in {} ms; it runs on "
                        + "every cluster now", snap.snapshotId(), exported.getManifestDigest(), exported.getLayerBytes(),
                exported.getLayersWritten(), (System.nanoTime() - started) / 1_000_000);
        return true;
    }
}
