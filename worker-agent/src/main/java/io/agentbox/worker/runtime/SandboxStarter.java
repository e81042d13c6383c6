package io.agentbox.worker.runtime;

import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.image.SandboxImage;
import java.util.Optional;

/** Starts one sandbox: what a runtime the worker fills itself gives its warm pool ({@link PoolContext#warmPool}). */
@FunctionalInterface
public interface SandboxStarter {

    /**
     * Starts one idle sandbox of {@code template} named {@code sandboxId} from {@code image} (the
     * template's image as the worker prepared it; empty: the runtime's built-in root) and returns
     * once commands can run in it.
     *
     * @throws io.grpc.StatusRuntimeException UNAVAILABLE when the sandbox cannot be started
     */
    RuntimeSandbox start(String sandboxId, Template template, Optional<SandboxImage> image);
}
