package io.agentbox.worker.pool;

import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.SandboxClaim;

/**
 * The idle sandboxes of one template, whichever runtime makes them: {@link WarmPool} for
 * runtimes the worker fills itself ({@code local}), {@link RuntimeTemplatePool} for runtimes
 * that pool on their own ({@code kubernetes}). The claim path sees only this interface, so the
 * hub cannot tell runtimes apart.
 */
interface TemplatePool {

    Template template();

    /** Name of the runtime that makes this pool's sandboxes. */
    String runtime();

    /** Why the pool cannot start sandboxes now (the last start failure), or null when it can. */
    default String lastError() {
        return null;
    }

    /**
     * Whether the template's image is ready on this worker (reported to the hub with the pool's
     * capacity); ready for runtimes that fetch images themselves.
     */
    default io.agentbox.worker.image.ImageState imageState() {
        return io.agentbox.worker.image.ImageState.READY;
    }

    /** Idle sandboxes ready to be claimed. */
    int idle();

    /** How many more sandboxes could be added beside the idle and claimed ones. */
    int headroom();

    /** Applies a new version of the template (same runtime). */
    void update(Template next);

    /**
     * Hands out an idle sandbox, waiting up to {@link SandboxPools#CLAIM_WAIT} when none is idle.
     *
     * @throws io.grpc.StatusRuntimeException RESOURCE_EXHAUSTED when none became available,
     *     UNAVAILABLE when the runtime cannot claim
     */
    RuntimeSandbox take(SandboxClaim claim);

    /** A sandbox taken from this pool was killed: give back what it held (a host slot). */
    void released();

    /** Starts replacements when the pool is below its size (no-op for self-pooling runtimes). */
    void refill();

    /** The template is gone: drop idle sandboxes; claimed ones keep running. */
    void retire();

    /** Worker shutdown. */
    void close();
}
