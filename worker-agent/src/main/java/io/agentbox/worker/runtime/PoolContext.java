package io.agentbox.worker.runtime;

import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.image.TemplateImages;

/**
 * What the worker lends a runtime when it opens a pool ({@link SandboxRuntime#openPool}): its
 * cluster id, its image preparation, the generic warm pool for runtimes it fills itself, and
 * where sandboxes left by a previous worker process go.
 */
public interface PoolContext {

    /** This worker's cluster id, part of every sandbox id ({@code SandboxIds.newSandboxId}). */
    String clusterId();

    /** Prepares templates' images on this worker (pull, unpack) before sandboxes start from them. */
    TemplateImages images();

    /**
     * The worker's warm pool of {@code template} over {@code starter}: keeps {@code pool_size}
     * idle sandboxes started in the background (pausing while claims come in a burst), starts
     * nothing until {@link #images()} prepared the template's image, holds one slot of the
     * worker's host-wide live-sandbox limit per sandbox, and backs off after failed starts. The
     * pool is filling when returned.
     */
    RuntimePool warmPool(Template template, SandboxStarter starter);

    /**
     * Hands the worker a sandbox that a previous worker process claimed (found by the runtime,
     * for example from pod labels), now or later (when this replica becomes the leader); the
     * worker serves it as claimed with {@code claim}'s owner and end time.
     */
    void adopt(RuntimeSandbox sandbox, SandboxClaim claim);
}
