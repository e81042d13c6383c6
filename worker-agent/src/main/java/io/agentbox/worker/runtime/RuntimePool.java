package io.agentbox.worker.runtime;

import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.image.ImageState;
import java.time.Duration;

/**
 * The idle sandboxes of one template on one runtime ({@link SandboxRuntime#openPool}): the only
 * way the worker gets a sandbox. Thread-safe.
 */
public interface RuntimePool {

    /** The template version the pool makes sandboxes of now. */
    Template template();

    /**
     * Applies a new version of the template (same name and runtime): resize, or replace idle
     * sandboxes whose shape changed; claimed ones keep theirs.
     *
     * @throws io.grpc.StatusRuntimeException INVALID_ARGUMENT (and nothing changes) when the
     *     runtime cannot make sandboxes of the new version
     */
    void update(Template next);

    /**
     * Hands out a sandbox for {@code request}: an idle one at once, else waits up to {@code wait}
     * (without polling: the wait ends when a sandbox becomes idle, a host slot frees, or the pool
     * retires or closes). The pool names the sandbox ({@link RuntimeSandbox#id}).
     *
     * @throws io.grpc.StatusRuntimeException RESOURCE_EXHAUSTED when none became available within
     *     {@code wait}; UNAVAILABLE when the pool cannot hand out sandboxes now (image not ready,
     *     a start failed, not the leader, retired or closed); CANCELLED when the thread is interrupted
     */
    RuntimeSandbox claim(ClaimRequest request, Duration wait);

    /** A sandbox claimed from this pool was killed: gives back what it held (a host slot). */
    default void released(RuntimeSandbox sandbox) {}

    /** Idle sandboxes ready to be claimed. */
    int idle();

    /**
     * How many more sandboxes claims could get beside the idle and claimed ones (for the local
     * runtime: free host slots plus other pools' idle sandboxes, which a claim evicts).
     */
    int headroom();

    /**
     * Whether the template's image is ready here (reported to the hub with the pool's capacity);
     * ready for runtimes that fetch images themselves.
     */
    default ImageState imageState() {
        return ImageState.READY;
    }

    /** Why the pool cannot start sandboxes now (the last start failure), or null when it can. */
    default String lastError() {
        return null;
    }

    /** The template is gone: stop keeping idle sandboxes; claimed ones keep running until released. */
    void retire();

    /** Worker shutdown: stops the pool's work; what outlives the worker (pods) stays for the next one. */
    void close();
}
