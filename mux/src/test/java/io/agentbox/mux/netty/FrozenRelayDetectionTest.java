package io.agentbox.mux.netty;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.PausableRelay;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A worker-like client and a hub-like server with the default keepalive, over a real TCP relay
 * that freezes: both ends notice the silent peer within 15 s (it took 43 s with 30 s + 30 s).
 */
class FrozenRelayDetectionTest {

    private static long since(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
    }

    @Test
    void bothEndsNoticeAFrozenRelayWithin15Seconds() throws Exception {
        MuxConfig defaults = MuxConfig.defaults();
        CompletableFuture<MuxSession> serverSession = new CompletableFuture<>();
        try (NettyWebSocketServer server = NettyWebSocketServer.builder().bind("127.0.0.1", 0)
                .route("/mux", rq -> {
                    MuxFrameHandler h = new MuxFrameHandler(MuxRole.SERVER, defaults, null);
                    h.session().thenAccept(serverSession::complete);
                    return h;
                }).start();
             PausableRelay relay = new PausableRelay(server.address())) {
            MuxSession client = NettyWebSocketClient.connect(URI.create("ws://127.0.0.1:" + relay.port() + "/mux"), null,
                    MuxRole.CLIENT, defaults, null, Duration.ofSeconds(10)).get(20, TimeUnit.SECONDS);
            MuxSession hub = serverSession.get(20, TimeUnit.SECONDS);
            client.ping().get(10, TimeUnit.SECONDS);

            relay.pause();
            long frozenAt = System.nanoTime();
            CompletableFuture<Long> clientMs = client.closeFuture().thenApply(v -> since(frozenAt));
            CompletableFuture<Long> hubMs = hub.closeFuture().thenApply(v -> since(frozenAt));
            long c = clientMs.get(30, TimeUnit.SECONDS);
            long h = hubMs.get(30, TimeUnit.SECONDS);
            System.out.printf("frozen relay: client ended its session %d ms, server %d ms after the freeze%n", c, h);
            assertThat(c).as("client's dead-peer detection time in ms").isLessThan(15_000);
            assertThat(h).as("server's dead-peer detection time in ms").isLessThan(15_000);
        }
    }
}
