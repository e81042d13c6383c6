package io.agentbox.mux.interop;

import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.jetty.MuxWebSocketEndpoint;
import io.agentbox.mux.jetty.MuxWebSockets;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Java yamux client (Jetty WebSocket client) against the Go yamux server (gorilla WebSocket server). */
class JettyClientGoServerInteropTest extends GoInteropTestBase {

    private static final AtomicInteger IDS = new AtomicInteger();
    private static GoPeer go;
    private static String address;
    private static WebSocketClient wsClient;

    @BeforeAll
    static void startGoServer() throws Exception {
        go = GoPeer.server();
        address = go.awaitLine("LISTEN ", Duration.ofSeconds(20)).substring("LISTEN ".length()).trim();
        wsClient = new WebSocketClient();
        MuxWebSockets.configure(wsClient, config(LARGE));
        wsClient.start();
    }

    @AfterAll
    static void stop() throws Exception {
        if (wsClient != null) {
            wsClient.stop();
        }
        if (go != null) {
            go.close();
        }
    }

    @Override
    String topology() {
        return "jetty-client/go-server";
    }

    @Override
    Link connect(int window) throws Exception {
        String id = "j" + IDS.incrementAndGet();
        MuxWebSocketEndpoint ep = new MuxWebSocketEndpoint(MuxRole.CLIENT, config(window), echoAcceptor());
        wsClient.connect(ep, URI.create("ws://" + address + "/mux?id=" + id + "&window=" + window)).get(20, TimeUnit.SECONDS);
        MuxSession s = ep.session().get(20, TimeUnit.SECONDS);
        go.awaitLine("CONN " + id + " window=" + window, Duration.ofSeconds(20));
        return new Link(s, go, id);
    }
}
