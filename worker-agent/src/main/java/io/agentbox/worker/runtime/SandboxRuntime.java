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

    /**
     * Starts one idle sandbox of {@code template} from {@code image}, the template's image as the
     * worker prepared it ({@code Optional.empty()}: the runtime's built-in root, for templates
     * without an image). Runtimes that run images override this; the default refuses an image
     * rather than silently running the built-in root in its place.
     *
     * @throws io.grpc.StatusRuntimeException UNAVAILABLE when the sandbox cannot be started
     */
    default RuntimeSandbox start(String sandboxId, Template template, java.util.Optional<io.agentbox.worker.image.SandboxImage> image) {
        if (image.isPresent()) {
            throw io.grpc.Status.UNAVAILABLE.withDescription("runtime '" + name() + "' cannot start sandboxes from image "
                    + image.get().reference()).asRuntimeException();
        }
        return start(sandboxId, template);
    }

    /** Kills every sandbox this runtime started and removes their files; idempotent. */
    @Override
    void close();
}
