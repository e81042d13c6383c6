package io.agentbox.manager.cli.client;

/**
 * The hub answered with an error: the native API's envelope {@code {"error": {"code", "message",
 * "requestId"}}} (or, from other surfaces, any body, kept as the message). Printed as
 * {@code error: <message> (request id <id>)}, exit status 1.
 */
public final class ApiError extends ClientException {
    private final int status;
    private final String code;
    private final String requestId;

    ApiError(int status, String code, String message, String requestId) {
        super(message);
        this.status = status;
        this.code = code;
        this.requestId = requestId;
    }

    /** The HTTP status (400 and above). */
    public int status() {
        return status;
    }

    /** The envelope's code ({@code not_found}, {@code unauthorized}, ...), or {@code http_<status>} without an envelope. */
    public String code() {
        return code;
    }

    /** The request id the hub logged the call under (header {@code X-Request-Id}); null when none came back. */
    public String requestId() {
        return requestId;
    }

    /** {@code <message> (request id <id>)}. */
    public String describe() {
        return getMessage() + (requestId == null ? "" : " (request id " + requestId + ")");
    }
}
