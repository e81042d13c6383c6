package io.agentbox.worker.image.registry;

/** No HTTP exchange was possible: DNS, connection refused, TLS failure, timeout. */
public class RegistryUnreachableException extends RegistryException {
    public RegistryUnreachableException(String message, Throwable cause) {
        super(message, cause);
    }
}
