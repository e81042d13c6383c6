package io.agentbox.worker.image.registry;

/**
 * The manifest is readable but not something we run: schema 1, no entry for our platform, not a
 * container image, malformed, or over a size limit.
 */
public class UnsupportedManifestException extends RegistryException {
    public UnsupportedManifestException(String message) {
        super(message);
    }
}
