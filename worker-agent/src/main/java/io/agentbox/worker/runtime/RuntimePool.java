package io.agentbox.worker.runtime;

import io.agentbox.protocol.v1.Template;

/** One template's pool inside a {@link PoolingRuntime}. Thread-safe. */
public interface RuntimePool {

    /** Applies a new version of the template (size, shape). */
    void update(Template template);

    /**
     * Hands out an idle sandbox at once, without waiting on any remote API; the runtime records
     * the claim in the background.
     *
     * @return the sandbox, or null when none is idle right now
     * @throws io.grpc.StatusRuntimeException UNAVAILABLE when this worker may not claim (for
     *     example it is not the leader)
     */
    RuntimeSandbox claim(SandboxClaim claim);

    /** Idle sandboxes ready to be claimed. */
    int idle();

    /** How many more sandboxes the pool may still create (idle + running may grow by this). */
    int headroom();

    /** The template is gone: stop keeping idle sandboxes; claimed ones keep running until released. */
    void retire();

    /** Worker shutdown: stop local work; sandboxes and runtime objects stay for the next worker. */
    void close();
}
