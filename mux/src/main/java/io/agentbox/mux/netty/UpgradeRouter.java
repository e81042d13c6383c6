package io.agentbox.mux.netty;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.util.AttributeKey;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.Function;

/**
 * Checks the HTTP request of a new connection and, if it is an acceptable WebSocket upgrade,
 * installs Netty's WebSocket protocol handler and the route's frame handler, then steps aside.
 * Refusals (404 unknown path, 400 not an upgrade, the gate's status) close the connection.
 */
final class UpgradeRouter extends SimpleChannelInboundHandler<FullHttpRequest> {

    /** Upgrade requests carry no body; their headers must fit in this many bytes. */
    static final int MAX_REQUEST_BYTES = 16 * 1024;
    private static final long HANDSHAKE_TIMEOUT_MILLIS = 10_000;
    /** The server's frame payload limit, on every upgraded channel, for a decoder put in later. */
    static final AttributeKey<Integer> MAX_FRAME_PAYLOAD = AttributeKey.valueOf(UpgradeRouter.class, "maxFramePayload");

    private final Map<String, Function<FullHttpRequest, ChannelHandler>> routes;
    private final UpgradeGate gate;
    private final int maxFramePayload;

    UpgradeRouter(Map<String, Function<FullHttpRequest, ChannelHandler>> routes, UpgradeGate gate, int maxFramePayload) {
        this.routes = routes;
        this.gate = gate;
        this.maxFramePayload = maxFramePayload;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
        if (!req.decoderResult().isSuccess()) {
            refuse(ctx, HttpResponseStatus.BAD_REQUEST, "malformed HTTP request");
            return;
        }
        String path = new QueryStringDecoder(req.uri()).path();
        Function<FullHttpRequest, ChannelHandler> route = routes.get(path);
        if (route == null) {
            refuse(ctx, HttpResponseStatus.NOT_FOUND, "no WebSocket endpoint at " + path);
            return;
        }
        if (!HttpMethod.GET.equals(req.method())
                || !req.headers().containsValue(HttpHeaderNames.UPGRADE, HttpHeaderValues.WEBSOCKET, true)) {
            refuse(ctx, HttpResponseStatus.BAD_REQUEST, "expected a WebSocket upgrade (GET with Upgrade: websocket)");
            return;
        }
        UpgradeGate.Refusal refusal = gate.check(req, ctx.channel().remoteAddress());
        if (refusal != null) {
            refuse(ctx, refusal.status(), refusal.message(), refusal.headers());
            return;
        }
        WebSocketServerProtocolConfig config = WebSocketServerProtocolConfig.newBuilder()
                .websocketPath(req.uri())
                .checkStartsWith(false)
                .handshakeTimeoutMillis(HANDSHAKE_TIMEOUT_MILLIS)
                .decoderConfig(WebSocketDecoderConfig.newBuilder()
                        .maxFramePayloadLength(maxFramePayload)
                        .allowExtensions(false)
                        .build())
                .build();
        ctx.channel().attr(MAX_FRAME_PAYLOAD).set(maxFramePayload);
        ctx.pipeline().addAfter(ctx.name(), "websocket", new WebSocketServerProtocolHandler(config));
        ctx.pipeline().addAfter("websocket", "frames", route.apply(req));
        if (ctx.pipeline().get("upgrade-timeout") != null) {
            ctx.pipeline().remove("upgrade-timeout");
        }
        ctx.fireChannelRead(req.retain());
        ctx.pipeline().remove(this);
    }

    private static void refuse(ChannelHandlerContext ctx, HttpResponseStatus status, String message) {
        refuse(ctx, status, message, Map.of());
    }

    private static void refuse(ChannelHandlerContext ctx, HttpResponseStatus status, String message,
            Map<String, String> headers) {
        FullHttpResponse rsp = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.copiedBuffer(message + "\n", StandardCharsets.UTF_8));
        rsp.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8");
        rsp.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, rsp.content().readableBytes());
        rsp.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        headers.forEach(rsp.headers()::set);
        ctx.writeAndFlush(rsp).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
