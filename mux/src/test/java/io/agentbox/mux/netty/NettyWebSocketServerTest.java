package io.agentbox.mux.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.mux.MuxConfig;
import io.agentbox.mux.MuxRole;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.tools.StreamEcho;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketClientHandshakeException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The Netty WebSocket adapter on loopback: refusals before the upgrade, limits, and a mux session over it. */
class NettyWebSocketServerTest {

    private static final Duration T = Duration.ofSeconds(10);
    private static final String TOKEN = "s3cret";
    private final AtomicInteger handlersMade = new AtomicInteger();
    private final LinkedBlockingQueue<MuxSession> serverSessions = new LinkedBlockingQueue<>();
    private NettyWebSocketServer server;
    private String base;

    @BeforeEach
    void start() throws Exception {
        MuxConfig config = MuxConfig.defaults();
        server = NettyWebSocketServer.builder()
                .bind("127.0.0.1", 0)
                .maxFramePayloadBytes(64 * 1024)
                .gate((rq, remote) -> ("Bearer " + TOKEN).equals(rq.headers().get("Authorization")) ? null
                        : new UpgradeGate.Refusal(HttpResponseStatus.UNAUTHORIZED, "invalid token",
                                Map.of("WWW-Authenticate", "Bearer realm=\"test\"")))
                .route("/mux", rq -> {
                    handlersMade.incrementAndGet();
                    MuxFrameHandler h = new MuxFrameHandler(MuxRole.SERVER, config, (s, ch) -> ch.pipeline().addLast(new StreamEcho()));
                    h.session().thenAccept(serverSessions::add);
                    return h;
                })
                .start();
        base = "127.0.0.1:" + server.address().getPort();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private static DefaultHttpHeaders auth(String token) {
        DefaultHttpHeaders h = new DefaultHttpHeaders();
        h.set("Authorization", "Bearer " + token);
        return h;
    }

    @Test
    void anUnknownPathIs404AndAPlainGetIs400BeforeAnyHandlerExists() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> unknown = http.send(HttpRequest.newBuilder(URI.create("http://" + base + "/nope")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(unknown.body()).isEqualTo("no WebSocket endpoint at /nope\n");

        HttpResponse<String> plain = http.send(HttpRequest.newBuilder(URI.create("http://" + base + "/mux")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(plain.statusCode()).isEqualTo(400);
        assertThat(plain.body()).contains("expected a WebSocket upgrade");
        assertThat(handlersMade).hasValue(0);
    }

    @Test
    void theGateRefusesAWrongTokenWith401AndItsHeaders() {
        CompletableFuture<MuxSession> f = NettyWebSocketClient.connect(URI.create("ws://" + base + "/mux"), auth("wrong"),
                MuxRole.CLIENT, MuxConfig.defaults(), null, T);
        assertThatThrownBy(() -> f.get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(WebSocketClientHandshakeException.class)
                .satisfies(e -> {
                    WebSocketClientHandshakeException h = (WebSocketClientHandshakeException) e;
                    assertThat(h.response().status().code()).isEqualTo(401);
                    assertThat(h.response().headers().get("WWW-Authenticate")).isEqualTo("Bearer realm=\"test\"");
                });
        assertThat(handlersMade).hasValue(0);
    }

    @Test
    void anAcceptedUpgradeCarriesAMuxSessionBothWays() throws Exception {
        MuxSession client = NettyWebSocketClient.connect(URI.create("ws://" + base + "/mux?x=1"), auth(TOKEN),
                MuxRole.CLIENT, MuxConfig.defaults(), null, T).get(10, TimeUnit.SECONDS);
        MuxSession serverSide = serverSessions.poll(10, TimeUnit.SECONDS);
        assertThat(serverSide).isNotNull();

        Channel stream = client.openStream().get(10, TimeUnit.SECONDS);
        CompletableFuture<String> echo = new CompletableFuture<>();
        StringBuilder got = new StringBuilder();
        stream.pipeline().addLast(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                ByteBuf b = (ByteBuf) msg;
                got.append(b.toString(StandardCharsets.UTF_8));
                b.release();
                if (got.length() >= 5) {
                    echo.complete(got.toString());
                }
            }
        });
        stream.writeAndFlush(Unpooled.copiedBuffer("hello", StandardCharsets.UTF_8));
        assertThat(echo.get(10, TimeUnit.SECONDS)).isEqualTo("hello");
        assertThat(serverSide.ping().get(10, TimeUnit.SECONDS)).isPositive();

        client.close();
        serverSide.closeFuture().get(10, TimeUnit.SECONDS);
        assertThat(serverSide.isOpen()).isFalse();
    }

    @Test
    void aFrameOverTheLimitClosesTheConnectionWith1009AndEndsTheSession() throws Exception {
        CompletableFuture<Integer> closeCode = new CompletableFuture<>();
        WebSocket ws = HttpClient.newHttpClient().newWebSocketBuilder()
                .header("Authorization", "Bearer " + TOKEN)
                .buildAsync(URI.create("ws://" + base + "/mux"), new WebSocket.Listener() {
                    @Override
                    public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
                        closeCode.complete(statusCode);
                        return null;
                    }

                    @Override
                    public void onError(WebSocket webSocket, Throwable error) {
                        closeCode.completeExceptionally(error);
                    }
                }).get(10, TimeUnit.SECONDS);
        MuxSession serverSide = serverSessions.poll(10, TimeUnit.SECONDS);
        assertThat(serverSide).isNotNull();

        ws.sendText("text frames are ignored", true).get(10, TimeUnit.SECONDS);
        assertThat(serverSide.isOpen()).isTrue();
        try {
            ws.sendBinary(ByteBuffer.allocate(64 * 1024 + 1), true).get(10, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            // the server may close before the client's send completes ("closed output"): the close code tells
        }

        try {
            assertThat(closeCode.get(10, TimeUnit.SECONDS)).isEqualTo(1009);
        } catch (java.util.concurrent.ExecutionException e) {
            // the server closed the socket while our oversized frame was still being written: the
            // reset can reach the client before it reads the 1009 close frame ("Broken pipe")
            assertThat(e.getCause()).isInstanceOf(java.io.IOException.class);
        }
        serverSide.closeFuture().get(10, TimeUnit.SECONDS);
        assertThat(serverSide.isOpen()).isFalse();
    }

    @Test
    void anUnreachableServerFailsTheConnectFuture() throws Exception {
        int port = server.address().getPort();
        server.close();
        CompletableFuture<MuxSession> f = NettyWebSocketClient.connect(URI.create("ws://127.0.0.1:" + port + "/mux"),
                auth(TOKEN), MuxRole.CLIENT, MuxConfig.defaults(), null, T);
        assertThatThrownBy(() -> f.get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasMessageContaining("Connection refused");
        server = NettyWebSocketServer.builder().route("/x", rq -> new ChannelInboundHandlerAdapter()).start();
    }

    @Test
    void aConnectionThatNeverSendsItsUpgradeRequestIsClosed() throws Exception {
        try (NettyWebSocketServer small = NettyWebSocketServer.builder()
                .upgradeTimeout(Duration.ofMillis(300))
                .route("/mux", rq -> new ChannelInboundHandlerAdapter())
                .start();
                java.net.Socket silent = new java.net.Socket("127.0.0.1", small.address().getPort())) {
            silent.setSoTimeout(10_000);
            assertThat(silent.getInputStream().read()).as("EOF from the server, not our 10 s read timeout").isEqualTo(-1);
        }
    }

    @Test
    void connectionsBeyondTheCapAreClosedAtOnce() throws Exception {
        try (NettyWebSocketServer small = NettyWebSocketServer.builder()
                .maxConnections(2)
                .upgradeTimeout(Duration.ofMinutes(5))
                .route("/mux", rq -> new ChannelInboundHandlerAdapter())
                .start();
                java.net.Socket a = new java.net.Socket("127.0.0.1", small.address().getPort());
                java.net.Socket b = new java.net.Socket("127.0.0.1", small.address().getPort())) {
            // the server counts a connection once it has accepted it: wait until both were
            a.setSoTimeout(200);
            b.setSoTimeout(200);
            for (java.net.Socket s : new java.net.Socket[] {a, b}) {
                assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(java.net.SocketTimeoutException.class);
            }
            try (java.net.Socket over = new java.net.Socket("127.0.0.1", small.address().getPort())) {
                over.setSoTimeout(10_000);
                // the 5-minute upgrade timeout cannot explain an EOF here: only the cap can
                assertThat(over.getInputStream().read()).isEqualTo(-1);
            }
            assertThatThrownBy(() -> a.getInputStream().read()).isInstanceOf(java.net.SocketTimeoutException.class);
        }
    }

    @Test
    void badArgumentsAreRefused() {
        assertThatThrownBy(() -> NettyWebSocketClient.connect(URI.create("http://" + base + "/mux"), null,
                MuxRole.CLIENT, MuxConfig.defaults(), null, T)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ws://");
        assertThatThrownBy(() -> NettyWebSocketServer.builder().route("nope", rq -> null))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> NettyWebSocketServer.builder().start()).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> NettyWebSocketServer.builder().bind("127.0.0.1", 70000))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
