package io.agentbox.manager.store;

/**
 * A hub store operation failed. {@link #reason()} says why, so callers map it to a status in one
 * place (the management API: 400, 404, 409, 500). Built only through the static factories.
 */
public final class StoreException extends RuntimeException {
    /** Why an operation failed. */
    public enum Reason {
        /** the caller passed a malformed or out-of-range value */
        INVALID_ARGUMENT,
        /** the named key, team, template, cluster or sandbox does not exist */
        NOT_FOUND,
        /** it already exists, is still referenced, or its resource version moved on */
        CONFLICT,
        /** the database failed or returned a corrupt row */
        FAILED
    }

    private final Reason reason;

    private StoreException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    /** A database failure or a corrupt row. */
    public StoreException(String message, Throwable cause) {
        this(Reason.FAILED, message, cause);
    }

    public static StoreException invalid(String message) {
        return new StoreException(Reason.INVALID_ARGUMENT, message, null);
    }

    public static StoreException notFound(String message) {
        return new StoreException(Reason.NOT_FOUND, message, null);
    }

    public static StoreException conflict(String message) {
        return new StoreException(Reason.CONFLICT, message, null);
    }

    public Reason reason() {
        return reason;
    }

    /** The HTTP status this refusal answers as: invalid argument 400, not found 404, conflict 409, failed 500. */
    public int httpStatus() {
        return switch (reason()) {
            case INVALID_ARGUMENT -> 400;
            case NOT_FOUND -> 404;
            case CONFLICT -> 409;
            case FAILED -> 500;
        };
    }
}
