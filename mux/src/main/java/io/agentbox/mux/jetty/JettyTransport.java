package io.agentbox.mux.jetty;

import io.agentbox.mux.MuxTransport;
import io.netty.buffer.ByteBuf;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.api.StatusCode;

/** {@link MuxTransport} over a Jetty WebSocket: every write is one binary message. */
final class JettyTransport implements MuxTransport {

    private final Session ws;

    JettyTransport(Session ws) {
        this.ws = ws;
    }

    @Override
    public void write(ByteBuf bytes, WriteCallback done) {
        try {
            ws.sendBinary(bytes.nioBuffer(), Callback.from(() -> {
                bytes.release();
                done.completed(null);
            }, failure -> {
                bytes.release();
                done.completed(failure);
            }));
        } catch (RuntimeException e) {
            bytes.release();
            done.completed(e);
        }
    }

    @Override
    public void close() {
        if (ws.isOpen()) {
            // a peer that never answers the close handshake must not keep the socket open
            ws.close(StatusCode.NORMAL, "mux closed", Callback.from(() -> { }, failure -> ws.disconnect()));
        }
    }
}
