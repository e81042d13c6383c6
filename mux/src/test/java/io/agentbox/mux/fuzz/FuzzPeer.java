package io.agentbox.mux.fuzz;

import io.agentbox.mux.MuxTransport;
import io.agentbox.mux.frame.FrameDecoder;
import io.agentbox.mux.frame.FrameHeader;
import io.agentbox.mux.frame.FrameListener;
import io.agentbox.mux.frame.MuxProtocolException;
import io.agentbox.mux.frame.YamuxFrames;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.ArrayList;
import java.util.List;

/**
 * The transport under a fuzzed session: decodes every frame the session writes (they must always
 * be valid yamux) and either completes writes at once or, in stall mode, holds every write
 * callback until {@link #unstall()} — a peer that does not read, so control replies pile up.
 */
final class FuzzPeer implements MuxTransport {

    private final List<FrameHeader> sent = new ArrayList<>();
    private final List<WriteCallback> held = new ArrayList<>();
    private boolean stalled;
    private volatile boolean closed;
    private volatile String malformed;
    private final FrameDecoder decoder = new FrameDecoder(new FrameListener() {
        @Override
        public long onHeader(FrameHeader h) {
            if (h.type() != YamuxFrames.TYPE_DATA) {
                sent.add(h);
            }
            return Long.MAX_VALUE;
        }

        @Override
        public void onDataPayload(FrameHeader h, ByteBuf payload) {
            payload.release();
            sent.add(h);
        }
    }, UnpooledByteBufAllocator.DEFAULT);

    FuzzPeer(boolean stalled) {
        this.stalled = stalled;
    }

    @Override
    public void write(ByteBuf bytes, WriteCallback done) {
        boolean now;
        synchronized (this) {
            try {
                decoder.decode(bytes);
            } catch (MuxProtocolException e) {
                malformed = e.getMessage();
            } finally {
                bytes.release();
            }
            now = !stalled;
            if (!now) {
                held.add(done);
            }
        }
        if (now) {
            done.completed(null);
        }
    }

    /** Completes held writes (which may trigger more writes, completed at once from now on). */
    void unstall() {
        List<WriteCallback> run;
        synchronized (this) {
            stalled = false;
            run = new ArrayList<>(held);
            held.clear();
        }
        run.forEach(cb -> cb.completed(null));
    }

    @Override
    public void close() {
        closed = true;
    }

    boolean closed() {
        return closed;
    }

    /** Non-null if the session ever wrote bytes that are not valid yamux. */
    String malformed() {
        return malformed;
    }

    synchronized List<FrameHeader> sent() {
        return new ArrayList<>(sent);
    }

    /** Codes of every GoAway the session sent, in order. */
    synchronized List<Long> goAways() {
        List<Long> codes = new ArrayList<>();
        for (FrameHeader h : sent) {
            if (h.type() == YamuxFrames.TYPE_GO_AWAY) {
                codes.add(h.lengthAsLong());
            }
        }
        return codes;
    }
}
