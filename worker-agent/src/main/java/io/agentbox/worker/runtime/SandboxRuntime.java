package io.agentbox.worker.runtime;

import io.agentbox.protocol.v1.Template;

/**
 * One kind of sandbox ({@code local}: containers on this host; {@code kubernetes}: pods). The
 * worker opens one {@link RuntimePool} per template of the runtime and claims sandboxes only
 * through it, so every runtime looks the same to the claim path. Implementations are thread-safe.
 */
public interface SandboxRuntime extends AutoCloseable {

    /** Runtime name as templates spell it: "local", "kubernetes". */
    String name();

    /**
     * Opens this worker's pool of {@code template} and starts filling it. A runtime the worker
     * fills itself returns {@link PoolContext#warmPool}; one that keeps its own pools (pods and a
     * reconciler) returns its own, and hands sandboxes a previous worker process claimed to
     * {@link PoolContext#adopt}.
     *
     * @throws io.grpc.StatusRuntimeException INVALID_ARGUMENT when the runtime cannot make
     *     sandboxes of this template (the message names the template and the field)
     */
    RuntimePool openPool(Template template, PoolContext context);

    /** Stops the runtime; sandboxes that do not outlive the worker are killed; idempotent. */
    @Override
    void close();
}
