package io.agentbox.manager.ports;

import com.google.protobuf.ByteString;
import io.agentbox.protocol.v1.PortRequest;
import io.grpc.stub.ClientCallStreamObserver;
import java.nio.ByteBuffer;
import java.util.concurrent.Executor;
import org.eclipse.jetty.io.AbstractConnection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;

/**
 * The client's connection after a 101 Switching Protocols (e.g. a WebSocket) to a sandbox port:
 * raw bytes both ways between the client socket and the worker's {@code ForwardPort} stream.
 * Reads from the client only while the gRPC stream is ready (backpressure); writes to the client
 * are serialized by the caller (one gRPC message requested per completed write).
 */
final class TunnelConnection extends AbstractConnection {
    static final int CHUNK_BYTES = 64 * 1024;

    private final ClientCallStreamObserver<PortRequest> upstream;
    private final byte[] firstToClient;
    private final Runnable afterFirstWrite;
    private boolean waitingForReady; // guarded by this

    TunnelConnection(EndPoint endPoint, Executor executor, ClientCallStreamObserver<PortRequest> upstream,
                     byte[] firstToClient, Runnable afterFirstWrite) {
        super(endPoint, executor);
        this.upstream = upstream;
        this.firstToClient = firstToClient;
        this.afterFirstWrite = afterFirstWrite;
    }

    @Override
    public void onOpen() {
        super.onOpen();
        if (firstToClient.length > 0) {
            toClient(firstToClient, afterFirstWrite);
        } else {
            afterFirstWrite.run();
        }
        fillInterested();
    }

    @Override
    public void onFillable() {
        ByteBuffer buf = BufferUtil.allocate(CHUNK_BYTES);
        try {
            while (true) {
                BufferUtil.clear(buf);
                int n = getEndPoint().fill(buf);
                if (n < 0) {
                    upstream.onCompleted(); // client closed: the worker closes its side once the server answers
                    return;
                }
                if (n == 0) {
                    fillInterested();
                    return;
                }
                upstream.onNext(PortRequest.newBuilder().setData(ByteString.copyFrom(buf)).build());
                synchronized (this) {
                    if (!upstream.isReady()) {
                        waitingForReady = true;
                        return; // resumed by upstreamReady()
                    }
                }
            }
        } catch (Throwable t) {
            upstream.cancel("client connection failed", t);
            close();
        }
    }

    /** The gRPC stream can take more: read from the client again if we stopped for it. */
    void upstreamReady() {
        synchronized (this) {
            if (!waitingForReady || !upstream.isReady()) {
                return;
            }
            waitingForReady = false;
        }
        fillInterested();
    }

    /** Writes bytes from the sandbox to the client, then runs {@code after} (or closes on failure). */
    void toClient(byte[] data, Runnable after) {
        getEndPoint().write(Callback.from(after, x -> {
            upstream.cancel("client connection failed", x);
            close();
        }), ByteBuffer.wrap(data));
    }

    /** The sandbox side ended: finish pending writes, then close. */
    void sandboxClosed() {
        getEndPoint().write(Callback.from(this::close), BufferUtil.EMPTY_BUFFER);
    }

    @Override
    public void onClose(Throwable cause) {
        super.onClose(cause);
        upstream.cancel("client connection closed", cause);
    }
}
