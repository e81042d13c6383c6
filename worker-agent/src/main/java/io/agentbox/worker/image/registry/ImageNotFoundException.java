package io.agentbox.worker.image.registry;

/** The registry has no such repository, tag, manifest or blob (404). */
public class ImageNotFoundException extends RegistryException {
    public ImageNotFoundException(String message) {
        super(message);
    }
}
