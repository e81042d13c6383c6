package io.agentbox.worker;

import io.agentbox.protocol.SandboxIds;
import io.agentbox.protocol.v1.PoolCapacity;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.pool.SandboxPools;
import io.agentbox.worker.runtime.SandboxRuntime;
import io.agentbox.worker.runtime.local.LocalRuntime;
import io.agentbox.worker.service.WorkerServiceImpl;
import io.grpc.BindableService;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * The sandbox side of a worker: its runtimes ({@code local} by default; {@code kubernetes} in a
 * cluster), one warm pool per template, and the {@code WorkerService} (worker.proto) that the hub
 * calls over the tunnel.
 *
 * <p>Typical use: {@code start}, then {@code applyTemplates} with every template snapshot from
 * the hub, add {@code grpcService()} to the tunnel's gRPC server, report {@code capacity()}
 * periodically, {@code close()} on shutdown.
 */
public final class SandboxHost implements AutoCloseable {
    private final List<SandboxRuntime> runtimes;
    private final SandboxPools pools;
    private final WorkerServiceImpl service;
    private volatile boolean closed;

    private SandboxHost(List<SandboxRuntime> runtimes, SandboxPools pools) {
        this.runtimes = List.copyOf(runtimes);
        this.pools = pools;
        this.service = new WorkerServiceImpl(pools);
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
        SandboxIds.requireClusterId(clusterId);
        Objects.requireNonNull(dataDir, "dataDir");
        LocalRuntime runtime = new LocalRuntime(dataDir, alsoHidden);
        return new SandboxHost(List.of(runtime), new SandboxPools(clusterId, runtime, maxSandboxes));
    }

    /**
     * A host over already started runtimes (for example {@code kubernetes} alone); the host owns
     * and closes them.
     *
     * @param maxSandboxes limit on live sandboxes of runtimes the worker fills itself (local)
     * @throws IllegalArgumentException for an invalid cluster id, no runtimes or two of one name
     */
    public static SandboxHost withRuntimes(String clusterId, List<SandboxRuntime> runtimes, int maxSandboxes) {
        SandboxIds.requireClusterId(clusterId);
        return new SandboxHost(runtimes, new SandboxPools(clusterId, runtimes, maxSandboxes));
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

    /** Per template, why its pool cannot start sandboxes now; empty when every pool can. */
    public java.util.Map<String, String> startErrors() {
        return pools.startErrors();
    }

    /** The WorkerService implementation to add to a gRPC server. */
    public BindableService grpcService() {
        return service;
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
            pools.close();
        } finally {
            runtimes.forEach(SandboxRuntime::close);
            service.shutdown();
        }
    }
}
