package io.agentbox.mux.tls;

/** A certificate, key or CA file that cannot be used; the message names the file and the problem. */
public final class TlsFileException extends IllegalArgumentException {
    public TlsFileException(String message) {
        super(message);
    }

    public TlsFileException(String message, Throwable cause) {
        super(message, cause);
    }
}
