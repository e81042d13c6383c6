package io.agentbox.mux.tls;

import io.netty.handler.ssl.NotSslRecordException;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.util.Locale;
import javax.net.ssl.SSLException;

/** Turns the JDK's TLS handshake errors into one line that says what is wrong with the server's certificate. */
public final class TlsFailures {
    private TlsFailures() {
    }

    /**
     * A one-line explanation of a failed TLS dial to {@code host}, or null when {@code error} is not
     * a TLS failure. The cases told apart: an expired or not yet valid certificate, a chain no
     * trusted CA signed, a certificate that does not name {@code host}, a server that does not
     * speak TLS; anything else keeps the JDK's message.
     */
    public static String describe(Throwable error, String host) {
        SSLException ssl = null;
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof CertificateExpiredException) {
                return "TLS: the server's certificate has expired (" + t.getMessage() + ")";
            }
            if (t instanceof CertificateNotYetValidException) {
                return "TLS: the server's certificate is not valid yet (" + t.getMessage() + ")";
            }
            if (t instanceof CertPathBuilderException) {
                return "TLS: the server's certificate is not signed by a trusted CA (" + t.getMessage() + ")";
            }
            String message = t.getMessage() == null ? "" : t.getMessage();
            String lower = message.toLowerCase(Locale.ROOT);
            if (lower.startsWith("no subject alternative") || lower.startsWith("no name matching")) {
                return "TLS: the server's certificate does not name host " + host + " (" + message + ")";
            }
            if (t instanceof NotSslRecordException || lower.contains("unsupported or unrecognized ssl message")) {
                return "TLS: the server at " + host + " does not speak TLS (is it a plain ws:// or http:// endpoint?)";
            }
            if (ssl == null && t instanceof SSLException) {
                ssl = (SSLException) t;
            }
        }
        return ssl == null ? null : "TLS handshake failed: " + ssl.getMessage();
    }
}
