package io.agentbox.worker.tunnel;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.MuxStreamAcceptor;
import io.agentbox.mux.netty.NettyWebSocketClient;
import io.agentbox.mux.tls.TlsFailures;
import io.agentbox.mux.util.DaemonThreads;
import io.agentbox.protocol.TunnelProtocol;
import io.agentbox.worker.util.Backoff;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.ssl.SslContext;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's end of the tunnel: dials the hub's WebSocket endpoint (Netty's WebSocket client, see
 * {@link NettyWebSocketClient}), runs a yamux client session over it, and redials with jittered
 * exponential backoff (0.2 s up to {@link #MAX_REDIAL_DELAY}) whenever the dial fails (refused connection, 401/400 from
 * the hub, handshake timeout after {@value #DIAL_TIMEOUT_SECONDS} s) or the session ends, until
 * {@link #close()}.
 *
 * <p>{@code onSession} is called once per established session, on the dialer thread (never on the
 * session's event loop, so it may block briefly); streams the hub opens go to {@code acceptor}.
 */
public final class TunnelClient implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TunnelClient.class);
    static final int DIAL_TIMEOUT_SECONDS = 10;

    private final URI hubUri;
    private final String clusterId;
    private final String token;
    private final MuxConfig config;
    private final MuxStreamAcceptor acceptor;
    private final Consumer<MuxSession> onSession;
    private final SslContext tls;
    /**
     * Longest wait between dials: short, so every worker is back within 2 s of its hub coming back
     * (a refused dial costs the hub next to nothing, even from thousands of workers).
     */
    public static final Duration MAX_REDIAL_DELAY = Duration.ofMillis(1500);
    private final Backoff backoff = Backoff.of(Duration.ofMillis(200), MAX_REDIAL_DELAY, Backoff.Jitter.FULL);
    /** Dials failed or sessions ended since the last session opened; the next wait grows with it. */
    private final AtomicInteger failures = new AtomicInteger();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(
            DaemonThreads.named("tunnel-dialer"));
    private volatile MuxSession current;
    private volatile boolean closed;

    /**
     * @param hubUri {@code ws://host:port/v1/tunnel} (or wss)
     */
    public TunnelClient(URI hubUri, String clusterId, String token, MuxConfig config, MuxStreamAcceptor acceptor,
                        Consumer<MuxSession> onSession) {
        this(hubUri, clusterId, token, config, acceptor, onSession, null);
    }

    /**
     * As above; {@code tls} verifies the hub on {@code wss://} (see {@code ClientTls.verifying}),
     * null for the JVM's trust store.
     */
    public TunnelClient(URI hubUri, String clusterId, String token, MuxConfig config, MuxStreamAcceptor acceptor,
                        Consumer<MuxSession> onSession, SslContext tls) {
        this.tls = tls;
        this.hubUri = hubUri;
        this.clusterId = clusterId;
        this.token = token;
        this.config = config;
        this.acceptor = acceptor;
        this.onSession = onSession;
    }

    public void start() {
        scheduler.execute(this::dial);
    }

    /** The live session, or null while disconnected. */
    public MuxSession current() {
        MuxSession s = current;
        return s != null && s.isOpen() ? s : null;
    }

    private void dial() {
        if (closed) {
            return;
        }
        try {
            HttpHeaders headers = new DefaultHttpHeaders();
            headers.set(TunnelProtocol.CLUSTER_ID_HEADER, clusterId);
            headers.set(TunnelProtocol.AUTHORIZATION_HEADER, TunnelProtocol.BEARER_PREFIX + token);
            NettyWebSocketClient.connect(hubUri, headers, MuxRole.CLIENT, config, acceptor,
                    Duration.ofSeconds(DIAL_TIMEOUT_SECONDS), tls).whenComplete((session, error) -> {
                        if (error != null) {
                            String tlsWhy = TlsFailures.describe(error, hubUri.getHost());
                            String why = tlsWhy != null ? tlsWhy + " (check --hub-ca and the hub's --tls-cert)"
                                    : rootMessage(error);
                            if (why.contains("401")) {
                                why += " (the hub refused the cluster token: check --token-file and --cluster-id)";
                            }
                            retry("dial " + hubUri + " failed: " + why);
                            return;
                        }
                        try {
                            scheduler.execute(() -> established(session));
                        } catch (RejectedExecutionException closing) {
                            session.close();
                        }
                    });
        } catch (RuntimeException e) {
            retry("dial " + hubUri + " failed: " + rootMessage(e));
        }
    }

    private void established(MuxSession session) {
        if (closed) {
            session.close();
            return;
        }
        failures.set(0);
        current = session;
        log.info("tunnel to {} open (cluster {})", hubUri, clusterId);
        session.closeFuture().whenComplete((v, e) -> {
            if (current == session) {
                current = null;
            }
            retry("tunnel to " + hubUri + " closed");
        });
        try {
            onSession.accept(session);
        } catch (RuntimeException e) {
            log.error("session setup failed", e);
            session.close();
        }
    }

    private void retry(String why) {
        if (closed) {
            return;
        }
        long delay = backoff.delay(failures.updateAndGet(n -> n == Integer.MAX_VALUE ? n : n + 1)).toMillis();
        log.warn("{}; redialing in {} ms", why, delay);
        try {
            scheduler.schedule(this::dial, delay, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException ignored) {
            // closing
        }
    }

    private static String rootMessage(Throwable t) {
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
    }

    @Override
    public void close() {
        closed = true;
        scheduler.shutdownNow();
        MuxSession s = current;
        if (s != null) {
            s.close();
        }
    }
}
