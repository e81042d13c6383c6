package io.agentbox.worker.service;

import io.agentbox.mux.util.DaemonThreads;
import io.agentbox.worker.build.BuildService;
import io.agentbox.worker.image.store.ImageStore;
import io.agentbox.worker.pool.SandboxPools;
import io.agentbox.worker.snapshot.Snapshots;
import io.grpc.BindableService;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The worker's gRPC services over one set of pools: {@code SandboxService}, {@code ProcessService},
 * {@code FilesystemService}, {@code PortService}, {@code TemplateBuildService} and
 * {@code ImageService} (sandbox.proto, process.proto, filesystem.proto, port.proto,
 * template_build.proto, image.proto). Add {@link #all()} to every gRPC server the hub (or the
 * worker's local API) calls; they share one executor for blocking work and one error mapping
 * ({@link WorkerStatus}).
 */
public final class WorkerServices {
    /** Runs blocking work (file streaming, port copies, watches, blob reads, exports) off the gRPC call executors. */
    private final ExecutorService blocking = Executors.newCachedThreadPool(DaemonThreads.numbered("worker-rpc"));
    private final List<BindableService> all;

    /** Every service over {@code pools}, without builds, snapshots or an image store (those calls fail with FAILED_PRECONDITION). */
    public WorkerServices(SandboxPools pools) {
        this(pools, null, null, null);
    }

    /**
     * @param builds runs BuildTemplate calls; null: they fail with FAILED_PRECONDITION
     * @param snapshots this worker's snapshots; null: CreateSnapshot, DeleteSnapshot and ExportSnapshot fail with FAILED_PRECONDITION
     * @param images serves ReadImageBlob; null: FAILED_PRECONDITION
     */
    public WorkerServices(SandboxPools pools, BuildService builds, Snapshots snapshots, ImageStore images) {
        this.all = List.of(
                new SandboxServiceImpl(pools, snapshots),
                new ProcessServiceImpl(pools),
                new FilesystemServiceImpl(pools, blocking),
                new PortServiceImpl(pools, blocking),
                new TemplateBuildServiceImpl(builds),
                new ImageServiceImpl(snapshots, images, blocking));
    }

    /** The six services, to add to a gRPC server. */
    public List<BindableService> all() {
        return all;
    }

    /** Stops the blocking executor; running calls end with their sandboxes. */
    public void shutdown() {
        blocking.shutdownNow();
    }
}
