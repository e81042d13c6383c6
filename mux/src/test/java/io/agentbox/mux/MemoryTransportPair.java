package io.agentbox.mux;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Two sessions joined in memory. Each direction has its own delivery thread (like a socket
 * reader); every write is cut into random pieces so frames straddle "messages".
 */
final class MemoryTransportPair implements AutoCloseable {

    final MuxSession client;
    final MuxSession server;
    private final ExecutorService toServer = Executors.newSingleThreadExecutor(r -> new Thread(r, "to-server"));
    private final ExecutorService toClient = Executors.newSingleThreadExecutor(r -> new Thread(r, "to-client"));
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile MuxSession clientRef;
    private volatile MuxSession serverRef;

    MemoryTransportPair(MuxConfig config, MuxStreamAcceptor clientAcceptor, MuxStreamAcceptor serverAcceptor) {
        clientRef = MuxSession.start(MuxRole.CLIENT, config, new Side(toServer, true), clientAcceptor);
        serverRef = MuxSession.start(MuxRole.SERVER, config, new Side(toClient, false), serverAcceptor);
        client = clientRef;
        server = serverRef;
    }

    /** Drops the "connection" without any GoAway, like a broken WebSocket. */
    void cut() {
        if (closed.compareAndSet(false, true)) {
            toServer.execute(() -> serverRef.transportClosed(null));
            toClient.execute(() -> clientRef.transportClosed(null));
        }
    }

    @Override
    public void close() {
        cut();
        toServer.shutdown();
        toClient.shutdown();
    }

    private final class Side implements MuxTransport {
        private final ExecutorService lane;
        private final boolean fromClient;

        Side(ExecutorService lane, boolean fromClient) {
            this.lane = lane;
            this.fromClient = fromClient;
        }

        @Override
        public void write(ByteBuf bytes, WriteCallback done) {
            if (closed.get()) {
                bytes.release();
                done.completed(new java.io.IOException("closed"));
                return;
            }
            byte[] copy = new byte[bytes.readableBytes()];
            bytes.readBytes(copy);
            bytes.release();
            try {
                lane.execute(() -> {
                    MuxSession target = fromClient ? serverRef : clientRef;
                    int pos = 0;
                    while (pos < copy.length) {
                        int n = Math.min(copy.length - pos, 1 + ThreadLocalRandom.current().nextInt(20_000));
                        target.receive(ByteBuffer.wrap(copy, pos, n));
                        pos += n;
                    }
                    done.completed(null);
                });
            } catch (java.util.concurrent.RejectedExecutionException e) {
                done.completed(e);
            }
        }

        @Override
        public void close() {
            cut();
        }
    }
}
