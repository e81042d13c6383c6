package io.agentbox.mux.jetty;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.MuxStreamAcceptor;
import java.io.EOFException;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;

/**
 * Jetty 12 (core API) WebSocket listener that runs a {@link MuxSession} over the connection.
 * Server side: return a new instance from the upgrade mapping's creator. Client side: pass a new
 * instance to {@code WebSocketClient.connect(endpoint, uri)}. One instance per connection.
 *
 * <p>Binary messages are consumed as a byte stream with partial delivery (a yamux frame may span
 * messages, a message may hold many frames); the mux reader never blocks, and Jetty demands the
 * next frame only after the callback completed, so socket reads follow the mux. Text messages are
 * ignored. WebSocket pings are answered with pongs. Configure limits with {@link MuxWebSockets}.
 */
public class MuxWebSocketEndpoint implements Session.Listener.AutoDemanding {

    private final MuxRole role;
    private final MuxConfig config;
    private final MuxStreamAcceptor acceptor;
    private final CompletableFuture<MuxSession> session = new CompletableFuture<>();
    private volatile Session ws;
    private volatile MuxSession mux;

    public MuxWebSocketEndpoint(MuxRole role, MuxConfig config, MuxStreamAcceptor acceptor) {
        this.role = Objects.requireNonNull(role, "role");
        this.config = Objects.requireNonNull(config, "config");
        this.acceptor = acceptor;
    }

    /** Completes with the mux session when the WebSocket opens; exceptionally if it fails first. */
    public CompletableFuture<MuxSession> session() {
        return session;
    }

    @Override
    public void onWebSocketOpen(Session ws) {
        this.ws = ws;
        MuxSession s = MuxSession.start(role, config, new JettyTransport(ws), acceptor);
        this.mux = s;
        session.complete(s);
    }

    @Override
    public void onWebSocketPartialBinary(ByteBuffer payload, boolean last, Callback callback) {
        MuxSession s = mux;
        if (s != null && payload != null) {
            s.receive(payload);
        }
        callback.succeed();
    }

    @Override
    public void onWebSocketPing(ByteBuffer payload) {
        Session w = ws;
        if (w != null && w.isOpen()) {
            w.sendPong(payload, Callback.NOOP);
        }
    }

    @Override
    public void onWebSocketClose(int statusCode, String reason) {
        ended(new EOFException("websocket closed: " + statusCode + " " + reason));
    }

    @Override
    public void onWebSocketError(Throwable cause) {
        ended(cause);
        Session w = ws;
        if (w != null) {
            w.disconnect();
        }
    }

    private void ended(Throwable cause) {
        session.completeExceptionally(cause);
        MuxSession s = mux;
        if (s != null) {
            s.transportClosed(cause);
        }
    }
}
