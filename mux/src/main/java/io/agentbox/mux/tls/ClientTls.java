package io.agentbox.mux.tls;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SSLException;

/** TLS contexts for dialing a server: hub verification with the host name checked. */
public final class ClientTls {
    private ClientTls() {
    }

    /**
     * A Netty client context that verifies the server's chain against {@code caFile} (PEM, one or
     * more CA certificates) or, when {@code caFile} is null, the JVM's system trust store, and
     * checks that the certificate names the host dialed (HTTPS rules: DNS names and IP addresses
     * in the subject alternative names).
     *
     * @throws TlsFileException when {@code caFile} cannot be read or holds no certificate
     */
    public static SslContext verifying(Path caFile) {
        SslContextBuilder b = SslContextBuilder.forClient().endpointIdentificationAlgorithm("HTTPS");
        if (caFile != null) {
            List<X509Certificate> cas = PemKeyPair.certificates(PemKeyPair.readLimited(caFile), caFile.toString());
            b.trustManager(cas);
        }
        try {
            return b.build();
        } catch (SSLException e) {
            throw new IllegalStateException("cannot set up TLS: " + e.getMessage(), e);
        }
    }
}
