package io.agentbox.manager.cli;

import io.agentbox.mux.tls.ServerTls;
import io.agentbox.mux.tls.TlsFileException;
import java.nio.file.Path;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** {@code --tls-cert} and {@code --tls-key}: serve TLS from PEM files, reloaded when they change (docs/tls.md). */
final class TlsOptions {
    @Option(names = "--tls-cert", description = "PEM certificate chain, leaf first (e.g. certbot's fullchain.pem); "
            + "with --tls-key serves HTTPS/wss. Re-read when it changes (docs/tls.md).")
    Path cert;

    @Option(names = "--tls-key", description = "PEM private key of --tls-cert, unencrypted PKCS#8 (BEGIN PRIVATE KEY, "
            + "e.g. certbot's privkey.pem).")
    Path key;

    /** The watched pair, or null when neither option is given. */
    ServerTls start(Object command) {
        if (cert == null && key == null) {
            return null;
        }
        if (cert == null || key == null) {
            throw new CommandLine.ParameterException(new CommandLine(command), "--tls-cert and --tls-key go together");
        }
        try {
            return ServerTls.watch(cert, key);
        } catch (TlsFileException e) {
            throw new CommandLine.ParameterException(new CommandLine(command), "TLS: " + e.getMessage());
        }
    }
}
