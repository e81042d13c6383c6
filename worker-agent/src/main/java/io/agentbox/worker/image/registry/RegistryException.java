package io.agentbox.worker.image.registry;

import java.io.IOException;

/**
 * A pull failed; the message names the image (or blob) and the cause. Subclasses say which kind
 * of failure it was so callers can tell "fix the reference" from "try again later".
 */
public class RegistryException extends IOException {
    private final int status;

    public RegistryException(String message) {
        this(message, 0, null);
    }

    public RegistryException(String message, Throwable cause) {
        this(message, 0, cause);
    }

    /** @param status the HTTP status the registry answered, 0 when the failure was not an answer */
    public RegistryException(String message, int status, Throwable cause) {
        super(message, cause);
        this.status = status;
    }

    /** HTTP status behind this failure, 0 when there was none. */
    public int status() {
        return status;
    }
}
