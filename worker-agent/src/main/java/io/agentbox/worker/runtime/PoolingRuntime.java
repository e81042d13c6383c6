package io.agentbox.worker.runtime;

import io.agentbox.protocol.v1.Template;
import java.util.function.BiConsumer;

/**
 * A runtime that keeps its own warm pools instead of being filled by the worker's generic
 * {@code WarmPool} (the {@code kubernetes} runtime: pods, informers, a leader). Its
 * {@link #start} is not used; sandboxes come from {@link RuntimePool#claim}.
 */
public interface PoolingRuntime extends SandboxRuntime {

    /**
     * Opens this worker's pool for {@code template} (creating the runtime's objects for it if
     * needed). Sandboxes claimed by an earlier worker process are handed to {@code adopt} with
     * their claim, now or later (for example when this replica becomes the leader).
     */
    RuntimePool openPool(Template template, BiConsumer<RuntimeSandbox, SandboxClaim> adopt);

    /** Pooling runtimes hand out sandboxes only through {@link RuntimePool#claim}. */
    @Override
    default RuntimeSandbox start(String sandboxId, Template template) {
        throw io.grpc.Status.UNIMPLEMENTED.withDescription("runtime '" + name() + "' starts sandboxes through its pools")
                .asRuntimeException();
    }
}
