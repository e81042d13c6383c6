package io.agentbox.mux.interop;

import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.jetty.MuxWebSocketEndpoint;
import io.agentbox.mux.jetty.MuxWebSockets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.websocket.server.WebSocketUpgradeHandler;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Go yamux client (gorilla WebSocket dialer) against the Java yamux server (Jetty WebSocket server). */
class GoClientJettyServerInteropTest extends GoInteropTestBase {

    private static final BlockingQueue<MuxSession> SESSIONS = new LinkedBlockingQueue<>();
    private static Server jetty;
    private static int port;

    @BeforeAll
    static void startJavaServer() throws Exception {
        jetty = new Server();
        ServerConnector connector = new ServerConnector(jetty);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        jetty.addConnector(connector);
        jetty.setHandler(WebSocketUpgradeHandler.from(jetty, container -> {
            MuxWebSockets.configure(container, config(LARGE));
            for (int window : new int[] {SMALL, LARGE}) {
                container.addMapping("/mux/" + window, (rq, rs, cb) -> {
                    MuxWebSocketEndpoint ep = new MuxWebSocketEndpoint(MuxRole.SERVER, config(window), echoAcceptor());
                    ep.session().thenAccept(SESSIONS::add);
                    return ep;
                });
            }
        }));
        jetty.start();
        port = connector.getLocalPort();
    }

    @AfterAll
    static void stop() throws Exception {
        if (jetty != null) {
            jetty.stop();
        }
    }

    @Override
    String topology() {
        return "go-client/jetty-server";
    }

    @Override
    Link connect(int window) throws Exception {
        return dialFromGo("ws://127.0.0.1:" + port + "/mux/" + window, window, SESSIONS);
    }

    @Override
    void disconnect(Link l) throws Exception {
        l.go().close();
    }
}
