package io.agentbox.mux;

import io.agentbox.mux.frame.FrameDecoder;
import io.agentbox.mux.frame.FrameEncoder;
import io.agentbox.mux.frame.FrameHeader;
import io.agentbox.mux.frame.FrameListener;
import io.agentbox.mux.frame.MuxProtocolException;
import io.agentbox.mux.frame.YamuxFrames;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A scripted yamux peer: the test injects raw frames and inspects every frame the session sends. */
final class RawPeer implements MuxTransport {

    record Frame(FrameHeader header, byte[] payload) {
    }

    final BlockingQueue<Frame> sent = new LinkedBlockingQueue<>();
    volatile boolean transportClosed;
    private final FrameDecoder decoder = new FrameDecoder(new FrameListener() {
        @Override
        public long onHeader(FrameHeader h) {
            if (h.type() != YamuxFrames.TYPE_DATA) {
                sent.add(new Frame(h, new byte[0]));
            }
            return Long.MAX_VALUE;
        }

        @Override
        public void onDataPayload(FrameHeader h, ByteBuf payload) {
            byte[] b = new byte[payload.readableBytes()];
            payload.readBytes(b);
            payload.release();
            sent.add(new Frame(h, b));
        }
    }, UnpooledByteBufAllocator.DEFAULT);
    MuxSession session;

    static RawPeer start(MuxRole role, MuxConfig config, MuxStreamAcceptor acceptor) {
        RawPeer peer = new RawPeer();
        peer.session = MuxSession.start(role, config, peer, acceptor);
        return peer;
    }

    @Override
    public synchronized void write(ByteBuf bytes, WriteCallback done) {
        try {
            decoder.decode(bytes);
        } catch (MuxProtocolException e) {
            throw new AssertionError(e);
        } finally {
            bytes.release();
        }
        done.completed(null);
    }

    @Override
    public void close() {
        transportClosed = true;
    }

    /** Injects one frame (header plus optional payload) into the session. */
    void inject(int type, int flags, int streamId, int length, byte... payload) {
        ByteBuf b = Unpooled.buffer();
        FrameEncoder.writeHeader(b, type, flags, streamId, length);
        b.writeBytes(payload);
        session.receive(b.nioBuffer());
    }

    /** Next frame the session sent, skipping keepalive pings; fails after 5 s. */
    Frame next() throws InterruptedException {
        Frame f = sent.poll(5, TimeUnit.SECONDS);
        if (f == null) {
            throw new AssertionError("session sent nothing within 5 s");
        }
        return f;
    }
}
