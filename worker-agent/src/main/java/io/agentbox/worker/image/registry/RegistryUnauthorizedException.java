package io.agentbox.worker.image.registry;

/** The registry or its token service refused us (401/403): credentials missing or wrong. */
public class RegistryUnauthorizedException extends RegistryException {
    public RegistryUnauthorizedException(String message) {
        super(message);
    }
}
