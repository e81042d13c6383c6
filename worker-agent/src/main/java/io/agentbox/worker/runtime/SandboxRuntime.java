package io.agentbox.worker.runtime;

import io.agentbox.protocol.v1.Template;

/**
 * Starts sandboxes of one kind (the embedded {@code local} runtime isolates processes with
 * crun containers). Implementations are thread-safe.
 */
public interface SandboxRuntime extends AutoCloseable {

    /** Runtime name as templates spell it: "local", "kubernetes". */
    String name();

    /**
     * Starts one idle sandbox for {@code template} and returns once commands can run in it.
     *
     * @throws io.grpc.StatusRuntimeException UNAVAILABLE when the sandbox cannot be started
     */
    RuntimeSandbox start(String sandboxId, Template template);

    /** Kills every sandbox this runtime started and removes their files; idempotent. */
    @Override
    void close();
}
