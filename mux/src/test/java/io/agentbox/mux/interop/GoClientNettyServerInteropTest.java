package io.agentbox.mux.interop;

import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.netty.MuxFrameHandler;
import io.agentbox.mux.netty.NettyWebSocketServer;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Go yamux client (gorilla WebSocket dialer) against the Java yamux server (Netty WebSocket server, the tunnel's). */
class GoClientNettyServerInteropTest extends GoInteropTestBase {

    private static final BlockingQueue<MuxSession> SESSIONS = new LinkedBlockingQueue<>();
    private static NettyWebSocketServer server;

    @BeforeAll
    static void startJavaServer() throws Exception {
        NettyWebSocketServer.Builder b = NettyWebSocketServer.builder()
                .bind("127.0.0.1", 0)
                .maxFramePayloadBytes(config(LARGE).maxTransportMessageBytes());
        for (int window : new int[] {SMALL, LARGE}) {
            b.route("/mux/" + window, rq -> {
                MuxFrameHandler h = new MuxFrameHandler(MuxRole.SERVER, config(window), echoAcceptor());
                h.session().thenAccept(SESSIONS::add);
                return h;
            });
        }
        server = b.start();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Override
    String topology() {
        return "go-client/netty-server";
    }

    @Override
    Link connect(int window) throws Exception {
        return dialFromGo("ws://127.0.0.1:" + server.address().getPort() + "/mux/" + window, window, SESSIONS);
    }

    @Override
    void disconnect(Link l) throws Exception {
        l.go().close();
    }
}
