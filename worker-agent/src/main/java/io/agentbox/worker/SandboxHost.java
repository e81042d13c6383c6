package io.agentbox.worker;

import io.agentbox.protocol.SandboxIds;
import io.agentbox.protocol.v1.PoolCapacity;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.build.BuildService;
import io.agentbox.worker.build.TemplateBuilder;
import io.agentbox.worker.image.ImageSource;
import io.agentbox.worker.image.RegistryCredentials;
import io.agentbox.worker.image.RegistrySettings;
import io.agentbox.worker.image.pull.StoreTemplateImages;
import io.agentbox.worker.image.TemplateImages;
import io.agentbox.worker.image.store.ImageStore;
import io.agentbox.worker.metrics.WorkerMeters;
import io.agentbox.worker.pool.SandboxPools;
import io.agentbox.worker.runtime.SandboxRuntime;
import io.agentbox.worker.runtime.local.LocalRuntime;
import io.agentbox.worker.runtime.net.BridgeConfig;
import io.agentbox.worker.runtime.net.BridgeNetwork;
import io.agentbox.worker.service.WorkerServices;
import io.agentbox.worker.snapshot.Snapshots;
import io.grpc.BindableService;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The sandbox side of a worker: its runtimes ({@code local} by default; {@code kubernetes} in a
 * cluster), one warm pool per template, and the worker's gRPC services (sandbox, process,
 * filesystem, port, template build and image: {@link WorkerServices}) that the hub calls over the tunnel.
 *
 * <p>Typical use: {@code start}, then {@code applyTemplates} with every template snapshot from
 * the hub, add every one of {@code grpcServices()} to the tunnel's gRPC server, report {@code capacity()}
 * periodically, {@code close()} on shutdown.
 */
public final class SandboxHost implements AutoCloseable {
    private final List<SandboxRuntime> runtimes;
    private final SandboxPools pools;
    private final WorkerServices services;
    private final RegistryCredentials credentials;
    private final Snapshots snapshots;
    private volatile boolean closed;

    private final BuildService builds;
    /** The image store's template images; null for hosts without one (kubernetes alone, tests). */
    private final StoreTemplateImages images;

    private SandboxHost(List<SandboxRuntime> runtimes, SandboxPools pools, RegistryCredentials credentials,
                        BuildService builds, Snapshots snapshots, StoreTemplateImages images) {
        this.runtimes = List.copyOf(runtimes);
        this.pools = pools;
        this.credentials = credentials;
        this.builds = builds;
        this.snapshots = snapshots;
        this.images = images;
        this.services = new WorkerServices(pools, builds, snapshots, images == null ? null : images.store());
    }

    /**
     * Where this host's image store gets built templates' images it lacks (the hub's blobs over
     * the tunnel; {@code WorkerAgent} sets it); no effect on a host without an image store.
     */
    public void builtImagesFrom(ImageSource source) {
        if (images != null) {
            images.builtImagesFrom(source);
        }
    }

    /**
     * Kills and removes leftovers under {@code dataDir/sandboxes}; starts no pools until
     * templates are applied. At most {@link SandboxPools#DEFAULT_MAX_SANDBOXES} sandboxes live at once.
     *
     * @param clusterId this worker's cluster id (embedded in every sandbox id)
     * @param dataDir worker data directory (created if missing)
     * @throws IllegalArgumentException for an invalid cluster id
     * @throws IllegalStateException when the worker is not root, crun or another host program is missing or the directory is unusable
     */
    public static SandboxHost start(String clusterId, Path dataDir) {
        return start(clusterId, dataDir, SandboxPools.DEFAULT_MAX_SANDBOXES);
    }

    /** As {@link #start(String, Path)} with an explicit limit on live sandboxes (idle + claimed). */
    public static SandboxHost start(String clusterId, Path dataDir, int maxSandboxes) {
        return start(clusterId, dataDir, maxSandboxes, List.of());
    }

    /**
     * As {@link #start(String, Path, int)}; {@code alsoHidden} are host directories sandboxes must
     * not see even read-only (for example the hub's store when hub and worker share a machine).
     */
    public static SandboxHost start(String clusterId, Path dataDir, int maxSandboxes, List<Path> alsoHidden) {
        return start(clusterId, dataDir, maxSandboxes, alsoHidden, RegistrySettings.DEFAULT);
    }

    /**
     * As {@link #start(String, Path, int, List)}; {@code registry} says how the image store
     * reaches registries ({@code --insecure-registry}).
     */
    public static SandboxHost start(String clusterId, Path dataDir, int maxSandboxes, List<Path> alsoHidden,
                                    RegistrySettings registry) {
        return start(clusterId, dataDir, maxSandboxes, alsoHidden, registry, WorkerMeters.none());
    }

    /**
     * As {@link #start(String, Path, int, List, RegistrySettings)}; {@code meters} records the
     * worker's pools, claims, starts, commands, OOM kills and image pulls (docs/metrics.md#worker-metrics).
     */
    public static SandboxHost start(String clusterId, Path dataDir, int maxSandboxes, List<Path> alsoHidden,
                                    RegistrySettings registry, WorkerMeters meters) {
        Objects.requireNonNull(registry, "registry");
        RegistryCredentials credentials = new RegistryCredentials();
        return start(clusterId, dataDir, maxSandboxes, alsoHidden, credentials,
                localImages(dataDir, registry, credentials, meters), meters);
    }

    /** As {@link #start(String, Path, int, List)} with the caller's image preparation (tests, other stores). */
    public static SandboxHost start(String clusterId, Path dataDir, int maxSandboxes, List<Path> alsoHidden,
                                    TemplateImages images) {
        return start(clusterId, dataDir, maxSandboxes, alsoHidden, new RegistryCredentials(), images, WorkerMeters.none());
    }

    private static SandboxHost start(String clusterId, Path dataDir, int maxSandboxes, List<Path> alsoHidden,
                                     RegistryCredentials credentials, TemplateImages images, WorkerMeters meters) {
        SandboxIds.requireClusterId(clusterId);
        Objects.requireNonNull(dataDir, "dataDir");
        BridgeNetwork network = new BridgeNetwork(BridgeConfig.forDataDir(dataDir));
        LocalRuntime runtime;
        try {
            runtime = new LocalRuntime(dataDir, alsoHidden, null, network);
        } catch (RuntimeException e) {
            network.close();
            throw e;
        }
        SandboxPools pools = new SandboxPools(clusterId, List.of(runtime), maxSandboxes, images, meters);
        BuildService builds = null;
        Snapshots snapshots = null;
        if (images instanceof StoreTemplateImages store) {
            try {
                builds = new BuildService(new TemplateBuilder(runtime, store.store(), store::image, dataDir), dataDir,
                        BuildService.DEFAULT_MAX_ARCHIVE_BYTES);
            } catch (IOException e) {
                pools.close();
                runtime.close();
                throw new IllegalStateException("cannot prepare template builds under " + dataDir + ": " + e.getMessage(), e);
            }
            // GC never takes a layer a live sandbox runs on (a deleted snapshot's, a released image's)
            store.store().layersInUse(runtime::layersInUse);
            snapshots = new Snapshots(pools, store.store());
        }
        return new SandboxHost(List.of(runtime), pools, credentials, builds, snapshots,
                images instanceof StoreTemplateImages store ? store : null);
    }

    /**
     * How the local runtime's pools get templates' images: the image store under {@code dataDir},
     * pulling through registry clients built from {@code registry} and the credentials the hub
     * pushes ({@link StoreTemplateImages}).
     *
     * @throws IllegalStateException when the image store cannot be opened
     */
    static TemplateImages localImages(Path dataDir, RegistrySettings registry, RegistryCredentials credentials,
                                      WorkerMeters meters) {
        try {
            return new StoreTemplateImages(ImageStore.open(dataDir), registry, credentials, meters);
        } catch (IOException e) {
            throw new IllegalStateException("cannot open the image store under " + dataDir + ": " + e.getMessage(), e);
        }
    }

    /**
     * A host over already started runtimes (for example {@code kubernetes} alone); the host owns
     * and closes them.
     *
     * @param maxSandboxes limit on live sandboxes of runtimes the worker fills itself (local)
     * @throws IllegalArgumentException for an invalid cluster id, no runtimes or two of one name
     */
    public static SandboxHost withRuntimes(String clusterId, List<SandboxRuntime> runtimes, int maxSandboxes) {
        return withRuntimes(clusterId, runtimes, maxSandboxes, WorkerMeters.none());
    }

    /** As above; {@code meters} records the pools, claims and commands. */
    public static SandboxHost withRuntimes(String clusterId, List<SandboxRuntime> runtimes, int maxSandboxes,
                                           WorkerMeters meters) {
        SandboxIds.requireClusterId(clusterId);
        return new SandboxHost(runtimes, new SandboxPools(clusterId, runtimes, maxSandboxes, TemplateImages.BUILT_IN_ONLY,
                meters), new RegistryCredentials(), null, null, null);
    }

    /** Names of the runtimes this host runs (reported to the hub at registration). */
    public List<String> runtimeNames() {
        return runtimes.stream().map(SandboxRuntime::name).toList();
    }

    /**
     * Authoritative snapshot: creates/resizes pools for templates present whose runtime this host
     * runs (empty = "local"), drains the idle sandboxes of templates absent. Claimed sandboxes
     * keep running.
     * A template whose network/env/resources changed gets fresh idle sandboxes.
     */
    public void applyTemplates(Collection<Template> templates) {
        pools.apply(List.copyOf(templates));
    }

    /** Per pool: idle, running (claimed) and capacity (idle + running + free host slots), by template name. */
    public List<PoolCapacity> capacity() {
        return pools.capacity();
    }

    /** See {@link SandboxPools#liveSandboxes()}. */
    public int liveSandboxes() {
        return pools.liveSandboxes();
    }

    /** Per template, why its pool cannot start sandboxes now; empty when every pool can. */
    public Map<String, String> startErrors() {
        return pools.startErrors();
    }

    /**
     * Registry credentials from the cluster config the hub pushes ({@link RegistryCredentials#apply}
     * is fed by the worker's config watch); the image store looks them up at each pull.
     */
    public RegistryCredentials registryCredentials() {
        return credentials;
    }

    /** The worker's gRPC services ({@link WorkerServices#all()}), every one to add to a gRPC server. */
    public List<BindableService> grpcServices() {
        return services.all();
    }

    /** This worker's snapshots; null when it has no image store. */
    public Snapshots snapshots() {
        return snapshots;
    }

    /** The pools behind the service (for in-process callers and tests). */
    public SandboxPools pools() {
        return pools;
    }

    /**
     * Kills every sandbox and removes every file they wrote, except sandboxes that outlive the
     * worker (kubernetes pods, adopted by the next worker); idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (builds != null) {
                builds.close();
            }
            if (snapshots != null) {
                snapshots.close();
            }
            pools.close();
        } finally {
            runtimes.forEach(SandboxRuntime::close);
            services.shutdown();
        }
    }
}
