package io.agentbox.manager.store;

/** A hub store operation failed (database error or corrupt row). */
public final class StoreException extends RuntimeException {
    public StoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
