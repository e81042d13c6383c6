package io.agentbox.manager.cli.client;

/**
 * A client command failed for a reason the user can act on (nothing configured, hub unreachable,
 * a bad local path); printed as {@code error: <message>}, exit status 1.
 */
public class ClientException extends RuntimeException {
    public ClientException(String message) {
        super(message);
    }
}
