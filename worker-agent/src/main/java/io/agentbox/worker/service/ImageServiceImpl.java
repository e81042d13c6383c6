package io.agentbox.worker.service;

import static io.agentbox.worker.service.WorkerStatus.unary;

import io.agentbox.protocol.image.BlobStreams;
import io.agentbox.protocol.v1.BlobChunk;
import io.agentbox.protocol.v1.BlobRef;
import io.agentbox.protocol.v1.ExportedSnapshot;
import io.agentbox.protocol.v1.ImageServiceGrpc;
import io.agentbox.protocol.v1.SnapshotRef;
import io.agentbox.worker.image.store.ImageStore;
import io.agentbox.worker.snapshot.Snapshots;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.Executor;

/**
 * image.proto's {@code ImageService}: what the hub copies out of this worker's image store (the
 * blobs of built images, a snapshot's OCI image form). Errors as worker_common.proto ({@link WorkerStatus}).
 */
final class ImageServiceImpl extends ImageServiceGrpc.ImageServiceImplBase {
    /** Null when the worker has no image store (ExportSnapshot then fails with FAILED_PRECONDITION). */
    private final Snapshots snapshots;
    /** Null when the worker has no image store (ReadImageBlob then fails with FAILED_PRECONDITION). */
    private final ImageStore images;
    private final Executor blocking;

    ImageServiceImpl(Snapshots snapshots, ImageStore images, Executor blocking) {
        this.snapshots = snapshots;
        this.images = images;
        this.blocking = blocking;
    }

    @Override
    public void readImageBlob(BlobRef req, StreamObserver<BlobChunk> out) {
        if (images == null) {
            out.onError(Status.FAILED_PRECONDITION.withDescription("this worker has no image store").asRuntimeException());
            return;
        }
        BlobStreams.serve(req, out, d -> images.blob(d).orElse(null), blocking, "this worker's image store");
    }

    @Override
    public void exportSnapshot(SnapshotRef req, StreamObserver<ExportedSnapshot> out) {
        // writing a layer blob reads and compresses the whole layer: off the gRPC executor
        blocking.execute(() -> unary(out, () -> SandboxServiceImpl.require(snapshots).export(req.getSnapshotId())));
    }
}
