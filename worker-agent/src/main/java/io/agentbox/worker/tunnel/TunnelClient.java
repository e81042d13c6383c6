package io.agentbox.worker.tunnel;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.MuxStreamAcceptor;
import io.agentbox.mux.jetty.MuxWebSocketEndpoint;
import io.agentbox.mux.jetty.MuxWebSockets;
import io.agentbox.protocol.TunnelProtocol;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.eclipse.jetty.websocket.client.ClientUpgradeRequest;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's end of the tunnel: dials the hub's WebSocket endpoint, runs a yamux client session
 * over it, and redials with jittered exponential backoff (0.2 s up to 15 s) whenever the dial fails
 * or the session ends, until {@link #close()}.
 *
 * <p>{@code onSession} is called once per established session, on a tunnel thread; streams the hub
 * opens go to {@code acceptor}.
 */
public final class TunnelClient implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TunnelClient.class);

    private final URI hubUri;
    private final String clusterId;
    private final String token;
    private final MuxConfig config;
    private final MuxStreamAcceptor acceptor;
    private final Consumer<MuxSession> onSession;
    private final Backoff backoff = new Backoff(Duration.ofMillis(200), Duration.ofSeconds(15));
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "tunnel-dialer");
        t.setDaemon(true);
        return t;
    });
    private final WebSocketClient client = new WebSocketClient();
    private volatile MuxSession current;
    private volatile boolean closed;

    /**
     * @param hubUri {@code ws://host:port/v1/tunnel} (or wss)
     */
    public TunnelClient(URI hubUri, String clusterId, String token, MuxConfig config, MuxStreamAcceptor acceptor,
                        Consumer<MuxSession> onSession) {
        this.hubUri = hubUri;
        this.clusterId = clusterId;
        this.token = token;
        this.config = config;
        this.acceptor = acceptor;
        this.onSession = onSession;
    }

    public void start() throws Exception {
        MuxWebSockets.configure(client, config);
        client.start();
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
            ClientUpgradeRequest request = new ClientUpgradeRequest(hubUri);
            request.setHeader(TunnelProtocol.CLUSTER_ID_HEADER, clusterId);
            request.setHeader(TunnelProtocol.AUTHORIZATION_HEADER, TunnelProtocol.BEARER_PREFIX + token);
            MuxWebSocketEndpoint endpoint = new MuxWebSocketEndpoint(MuxRole.CLIENT, config, acceptor);
            // A refused connection or upgrade fails the connect future, not always the endpoint:
            // watch both and redial once per attempt.
            AtomicBoolean settled = new AtomicBoolean();
            client.connect(endpoint, request).whenComplete((ws, error) -> {
                if (error != null && settled.compareAndSet(false, true)) {
                    retry("dial " + hubUri + " failed: " + rootMessage(error));
                }
            });
            endpoint.session().whenComplete((session, error) -> {
                if (!settled.compareAndSet(false, true)) {
                    if (session != null) {
                        session.close();
                    }
                    return;
                }
                if (error != null) {
                    retry("dial " + hubUri + " failed: " + rootMessage(error));
                    return;
                }
                backoff.reset();
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
            });
        } catch (Exception e) {
            retry("dial " + hubUri + " failed: " + rootMessage(e));
        }
    }

    private void retry(String why) {
        if (closed) {
            return;
        }
        long delay = backoff.nextDelayMillis();
        log.warn("{}; redialing in {} ms", why, delay);
        try {
            scheduler.schedule(this::dial, delay, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException ignored) {
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
        try {
            client.stop();
        } catch (Exception e) {
            log.debug("websocket client stop failed", e);
        }
    }
}
