package io.agentbox.manager.http;

import io.agentbox.mux.tls.PemKeyPair;
import io.agentbox.mux.tls.ServerTls;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Jetty's side of a {@link ServerTls}: an SSL context factory over its key pair, reloaded whenever the files change. */
public final class JettyTls {
    private static final Logger log = LoggerFactory.getLogger(JettyTls.class);

    private JettyTls() {
    }

    /** A server factory serving {@code tls}'s current pair; Jetty's reload applies new pairs to new connections. */
    public static SslContextFactory.Server factory(ServerTls tls) {
        SslContextFactory.Server f = new SslContextFactory.Server();
        use(f, tls.keyPair());
        tls.onReload(pair -> {
            try {
                f.reload(factory -> use((SslContextFactory.Server) factory, pair));
            } catch (Exception e) {
                log.warn("Jetty did not take the reloaded TLS certificate {}: {}", pair.describe(), e.toString());
            }
        });
        return f;
    }

    private static void use(SslContextFactory.Server f, PemKeyPair pair) {
        f.setKeyStore(pair.keyStore());
        f.setKeyStorePassword(PemKeyPair.KEY_STORE_PASSWORD);
        f.setCertAlias(PemKeyPair.KEY_ALIAS);
    }
}
