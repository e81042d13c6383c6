package io.agentbox.mux.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrameDecoder;

/**
 * The mux server's WebSocket frame reader (RFC 6455 §5), put in place of Netty's decoder once the
 * handshake is done ({@link #install}). The mux reads binary messages as one byte stream, so a
 * binary frame need not be whole before its bytes are useful: each piece of payload that arrives
 * is unmasked in place, eight bytes at a time over a {@code ByteBuffer} view
 * ({@link MaskedFrames#mask}), and passed on at once as a {@link ByteBuf} slice of the socket's
 * read buffer. Netty's decoder first gathers the whole frame (a copy for every frame that spans
 * reads) and unmasks through checked 8-byte accessors, which took a quarter of the tunnel server's
 * CPU in a profile.
 *
 * <p>Downstream sees: {@link ByteBuf}s (payload of binary messages, in order; message and frame
 * boundaries are not kept), and whole {@link PingWebSocketFrame}, {@link PongWebSocketFrame} and
 * {@link CloseWebSocketFrame} objects for Netty's protocol handler to answer. Text messages are
 * dropped unread (the mux never sends them). After a close frame, input is ignored.
 *
 * <p>Checks, as Netty's decoder makes them: no RSV bits (no extensions are negotiated), known
 * opcodes, masked frames from a client and unmasked from a server, control frames final and at
 * most 125 bytes, continuations only inside a fragmented message and no new message inside one:
 * a violation sends close 1002 and closes the connection; a frame longer than
 * {@code maxFramePayload} sends 1009. Not thread-safe: one channel, its event loop.
 */
final class StreamingFrameDecoder extends ChannelInboundHandlerAdapter {

    private static final int OP_CONTINUATION = 0x0;
    private static final int OP_TEXT = 0x1;
    private static final int OP_BINARY = 0x2;
    private static final int OP_CLOSE = 0x8;
    private static final int OP_PING = 0x9;
    private static final int OP_PONG = 0xA;
    private static final int MAX_CONTROL_PAYLOAD = 125;

    private final boolean expectMasked;
    private final long maxFramePayload;

    /** Header bytes read so far: 2, then 0/2/8 length bytes, then 0/4 key bytes. */
    private final byte[] header = new byte[14];
    private int headerFill;
    private int headerNeed = 2;

    // the frame being read (inFrame): its opcode, payload bytes left, masking key, bytes read so far
    private boolean inFrame;
    private int opcode;
    private boolean fin;
    private long remaining;
    private boolean masked;
    private int maskKey;
    private long payloadOffset;
    /** Payload of a control frame being read (at most 125 bytes). */
    private ByteBuf control;

    /** A fragmented message is open; {@code dropping} if it is a text message. */
    private boolean fragmented;
    private boolean dropping;
    /** A close frame arrived or the input broke the protocol: the rest is ignored. */
    private boolean done;

    /**
     * @param expectMasked true on the server end (clients must mask, RFC 6455 §5.1)
     * @param maxFramePayload largest payload of one frame accepted, bytes
     */
    StreamingFrameDecoder(boolean expectMasked, long maxFramePayload) {
        this.expectMasked = expectMasked;
        this.maxFramePayload = maxFramePayload;
    }

    /**
     * Replaces Netty's WebSocket frame decoder in {@code pipeline} (installed by the handshaker).
     * Call it before the old decoder has read anything, since its partial state is lost: on the
     * server when the handshake completes, because a client must not send frames before it has
     * the server's 101 answer (RFC 6455 §4.1). No-op if the pipeline has no Netty decoder.
     */
    static void install(ChannelPipeline pipeline, boolean expectMasked, long maxFramePayload) {
        ChannelHandlerContext old = pipeline.context(WebSocketFrameDecoder.class);
        if (old != null) {
            pipeline.replace(old.handler(), "mux-ws-decoder", new StreamingFrameDecoder(expectMasked, maxFramePayload));
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf in)) {
            // a frame Netty's decoder finished before it was replaced
            ctx.fireChannelRead(msg);
            return;
        }
        try {
            decode(ctx, in);
        } finally {
            in.release();
        }
    }

    private void decode(ChannelHandlerContext ctx, ByteBuf in) {
        while (!done && in.isReadable()) {
            if (!inFrame) {
                if (!readHeader(in)) {
                    return;
                }
                startFrame(ctx);
                if (!done && remaining == 0) {
                    endFrame(ctx);
                }
                continue;
            }
            int n = (int) Math.min(remaining, in.readableBytes());
            if (control != null) {
                control.writeBytes(in, n);
            } else if (dropping) {
                in.skipBytes(n);
            } else {
                ByteBuf piece = in.readRetainedSlice(n);
                if (masked) {
                    // byte i of the payload meets key byte i mod 4: start this piece at its offset
                    MaskedFrames.mask(piece, Integer.rotateLeft(maskKey, 8 * (int) (payloadOffset & 3)));
                }
                ctx.fireChannelRead(piece);
            }
            payloadOffset += n;
            remaining -= n;
            if (remaining == 0) {
                endFrame(ctx);
            }
        }
    }

    /** Reads header bytes; true once the whole header (its size known after two bytes) is in. */
    private boolean readHeader(ByteBuf in) {
        while (headerFill < headerNeed && in.isReadable()) {
            header[headerFill++] = in.readByte();
            if (headerFill == 2) {
                int len7 = header[1] & 0x7F;
                headerNeed = 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) + ((header[1] & 0x80) != 0 ? 4 : 0);
            }
        }
        return headerFill == headerNeed;
    }

    private void startFrame(ChannelHandlerContext ctx) {
        int b0 = header[0] & 0xFF;
        int b1 = header[1] & 0xFF;
        int len7 = b1 & 0x7F;
        int at = 2;
        long length = len7;
        if (len7 == 126) {
            length = ((header[2] & 0xFF) << 8) | (header[3] & 0xFF);
            at = 4;
        } else if (len7 == 127) {
            length = 0;
            for (int i = 2; i < 10; i++) {
                length = (length << 8) | (header[i] & 0xFF);
            }
            at = 10;
        }
        masked = (b1 & 0x80) != 0;
        maskKey = masked ? ((header[at] & 0xFF) << 24) | ((header[at + 1] & 0xFF) << 16)
                | ((header[at + 2] & 0xFF) << 8) | (header[at + 3] & 0xFF) : 0;
        headerFill = 0;
        headerNeed = 2;
        fin = (b0 & 0x80) != 0;
        opcode = b0 & 0x0F;
        remaining = length;
        payloadOffset = 0;
        inFrame = true;

        if ((b0 & 0x70) != 0) {
            fail(ctx, WebSocketCloseStatus.PROTOCOL_ERROR, "RSV bits set without an extension");
        } else if (masked != expectMasked) {
            fail(ctx, WebSocketCloseStatus.PROTOCOL_ERROR, expectMasked ? "unmasked client frame" : "masked server frame");
        } else if (length < 0) {
            fail(ctx, WebSocketCloseStatus.PROTOCOL_ERROR, "frame length has its most significant bit set");
        } else if (opcode >= OP_CLOSE) {
            if (opcode > OP_PONG) {
                fail(ctx, WebSocketCloseStatus.PROTOCOL_ERROR, "reserved control opcode " + opcode);
            } else if (!fin) {
                fail(ctx, WebSocketCloseStatus.PROTOCOL_ERROR, "fragmented control frame");
            } else if (length > MAX_CONTROL_PAYLOAD) {
                fail(ctx, WebSocketCloseStatus.PROTOCOL_ERROR, "control frame longer than 125 bytes");
            } else {
                control = ctx.alloc().buffer((int) length);
            }
        } else if (opcode > OP_BINARY) {
            fail(ctx, WebSocketCloseStatus.PROTOCOL_ERROR, "reserved data opcode " + opcode);
        } else if (length > maxFramePayload) {
            fail(ctx, WebSocketCloseStatus.MESSAGE_TOO_BIG, "frame of " + length + " bytes, limit " + maxFramePayload);
        } else if (opcode == OP_CONTINUATION && !fragmented) {
            fail(ctx, WebSocketCloseStatus.PROTOCOL_ERROR, "continuation frame outside a fragmented message");
        } else if (opcode != OP_CONTINUATION && fragmented) {
            fail(ctx, WebSocketCloseStatus.PROTOCOL_ERROR, "new message inside a fragmented message");
        } else if (opcode != OP_CONTINUATION) {
            dropping = opcode == OP_TEXT;
        }
    }

    private void endFrame(ChannelHandlerContext ctx) {
        inFrame = false;
        ByteBuf payload = control;
        if (payload == null) {
            fragmented = !fin;
            return;
        }
        control = null;
        if (masked) {
            MaskedFrames.mask(payload, maskKey);
        }
        switch (opcode) {
            case OP_PING -> ctx.fireChannelRead(new PingWebSocketFrame(payload));
            case OP_PONG -> ctx.fireChannelRead(new PongWebSocketFrame(payload));
            default -> {
                done = true;
                ctx.fireChannelRead(new CloseWebSocketFrame(true, 0, payload));
            }
        }
    }

    private void fail(ChannelHandlerContext ctx, WebSocketCloseStatus status, String reason) {
        done = true;
        ctx.channel().writeAndFlush(new CloseWebSocketFrame(status, reason)).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (control != null) {
            control.release();
            control = null;
        }
    }
}
