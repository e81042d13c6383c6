package io.agentbox.mux.tls;

import io.agentbox.mux.util.DaemonThreads;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A listener's server certificate from a PEM chain file and a PEM key file (see {@link PemKeyPair}),
 * picked up again when the files change: every {@link #DEFAULT_POLL_INTERVAL} both files are read
 * (following symlinks each time, so certbot's {@code live/} links and Kubernetes secret volumes,
 * which swap link targets, are seen) and, when their bytes differ from the last pair tried, loaded
 * and checked. A good pair replaces the current one for new connections (open ones keep theirs)
 * and is handed to {@link #onReload} listeners; a bad one (say, the key written but the chain not
 * yet) is logged and the current pair stays until the files change again.
 */
public final class ServerTls implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ServerTls.class);
    /** How often the files are checked by default. */
    public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(5);

    private record Loaded(PemKeyPair pair, SslContext netty) {}

    private final Path certFile;
    private final Path keyFile;
    private final List<Consumer<PemKeyPair>> listeners = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(
            DaemonThreads.named("tls-reload"));
    private volatile Loaded current;
    private byte[] triedCert;
    private byte[] triedKey;
    private String lastReadError;

    private ServerTls(Path certFile, Path keyFile) {
        this.certFile = Objects.requireNonNull(certFile, "certFile");
        this.keyFile = Objects.requireNonNull(keyFile, "keyFile");
    }

    /** Loads the pair now and watches the files every {@link #DEFAULT_POLL_INTERVAL}. */
    public static ServerTls watch(Path certFile, Path keyFile) {
        return watch(certFile, keyFile, DEFAULT_POLL_INTERVAL);
    }

    /**
     * Loads the pair now (so a bad file stops the caller at start) and checks the files every
     * {@code pollInterval}.
     *
     * @throws TlsFileException when the files cannot be used
     */
    public static ServerTls watch(Path certFile, Path keyFile, Duration pollInterval) {
        if (pollInterval.isNegative() || pollInterval.isZero()) {
            throw new IllegalArgumentException("pollInterval must be positive: " + pollInterval);
        }
        ServerTls tls = new ServerTls(certFile, keyFile);
        byte[] cert = PemKeyPair.readLimited(certFile);
        byte[] key = PemKeyPair.readLimited(keyFile);
        tls.install(cert, key);
        log.info("TLS certificate {} from {}", tls.current.pair().describe(), certFile);
        long millis = pollInterval.toMillis();
        tls.poller.scheduleWithFixedDelay(tls::poll, millis, millis, TimeUnit.MILLISECONDS);
        return tls;
    }

    /** The pair new connections get. */
    public PemKeyPair keyPair() {
        return current.pair();
    }

    /** A Netty server context over {@link #keyPair()} (rebuilt on every reload). */
    public SslContext nettyContext() {
        return current.netty();
    }

    public Path certFile() {
        return certFile;
    }

    public Path keyFile() {
        return keyFile;
    }

    /** Called with each new pair after it replaced the old one, on the poller thread. */
    public void onReload(Consumer<PemKeyPair> listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    private void install(byte[] cert, byte[] key) {
        triedCert = cert;
        triedKey = key;
        PemKeyPair pair = PemKeyPair.parse(cert, certFile.toString(), key, keyFile.toString());
        Instant now = Instant.now();
        if (pair.leaf().getNotAfter().toInstant().isBefore(now) || pair.leaf().getNotBefore().toInstant().isAfter(now)) {
            log.warn("the TLS certificate in {} is outside its validity ({} to {}): clients will refuse it",
                    certFile, pair.leaf().getNotBefore().toInstant(), pair.leaf().getNotAfter().toInstant());
        }
        SslContext netty;
        try {
            netty = SslContextBuilder.forServer(pair.key(), pair.chain()).build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new TlsFileException("cannot use the certificate in " + certFile + " with the key in " + keyFile
                    + ": " + e.getMessage(), e);
        }
        current = new Loaded(pair, netty);
    }

    private void poll() {
        byte[] cert;
        byte[] key;
        try {
            cert = PemKeyPair.readLimited(certFile);
            key = PemKeyPair.readLimited(keyFile);
        } catch (TlsFileException e) {
            if (!e.getMessage().equals(lastReadError)) {
                log.warn("TLS files unreadable, keeping the current certificate: {}", e.getMessage());
                lastReadError = e.getMessage();
            }
            return;
        }
        lastReadError = null;
        if (Arrays.equals(cert, triedCert) && Arrays.equals(key, triedKey)) {
            return;
        }
        try {
            install(cert, key);
        } catch (TlsFileException e) {
            log.warn("TLS files changed but cannot be used, keeping certificate {}: {}", current.pair().describe(),
                    e.getMessage());
            return;
        }
        log.info("TLS certificate reloaded: {} (new connections)", current.pair().describe());
        for (Consumer<PemKeyPair> l : listeners) {
            try {
                l.accept(current.pair());
            } catch (RuntimeException e) {
                log.warn("TLS reload listener failed", e);
            }
        }
    }

    /** Stops watching the files; the current pair stays usable. */
    @Override
    public void close() {
        poller.shutdownNow();
    }
}
