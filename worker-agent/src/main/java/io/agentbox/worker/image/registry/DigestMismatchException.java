package io.agentbox.worker.image.registry;

/** Bytes received do not hash to (or are not as long as) the digest and size that were asked for. */
public class DigestMismatchException extends RegistryException {
    public DigestMismatchException(String message) {
        super(message);
    }
}
