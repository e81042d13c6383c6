package io.agentbox.mux.tools;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;

/** Plain Netty WebSocket echo: each binary frame is sent back; reading pauses until the echo is written. */
final class RawEchoHandler extends SimpleChannelInboundHandler<BinaryWebSocketFrame> {

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, BinaryWebSocketFrame frame) {
        ctx.channel().config().setAutoRead(false);
        ctx.writeAndFlush(frame.retain()).addListener(f -> {
            if (f.isSuccess()) {
                ctx.channel().config().setAutoRead(true);
            } else {
                ctx.close();
            }
        });
    }
}
