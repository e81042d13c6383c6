package io.agentbox.mux.interop;

import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.netty.NettyWebSocketClient;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Java yamux client (Netty WebSocket client, the tunnel's) against the Go yamux server (gorilla WebSocket server). */
class NettyClientGoServerInteropTest extends GoInteropTestBase {

    private static final AtomicInteger IDS = new AtomicInteger();
    private static GoPeer go;
    private static String address;

    @BeforeAll
    static void startGoServer() throws Exception {
        go = GoPeer.server();
        address = go.awaitLine("LISTEN ", Duration.ofSeconds(20)).substring("LISTEN ".length()).trim();
    }

    @AfterAll
    static void stop() throws Exception {
        if (go != null) {
            go.close();
        }
    }

    @Override
    String topology() {
        return "netty-client/go-server";
    }

    @Override
    Link connect(int window) throws Exception {
        String id = "n" + IDS.incrementAndGet();
        URI uri = URI.create("ws://" + address + "/mux?id=" + id + "&window=" + window);
        MuxSession s = NettyWebSocketClient.connect(uri, null, MuxRole.CLIENT, config(window), echoAcceptor(),
                Duration.ofSeconds(20)).get(20, TimeUnit.SECONDS);
        go.awaitLine("CONN " + id + " window=" + window, Duration.ofSeconds(20));
        return new Link(s, go, id);
    }
}
