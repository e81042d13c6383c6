package io.agentbox.mux.grpc;

import io.agentbox.mux.MuxChildAcceptor;
import io.agentbox.mux.MuxEventLoops;
import io.agentbox.mux.MuxSession;
import io.agentbox.mux.MuxStreamAcceptor;
import io.agentbox.mux.MuxStreamChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.Channel;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * gRPC (grpc-netty, unshaded) over mux streams: one mux stream carries one HTTP/2 connection.
 *
 * <pre>
 * hub:    new MuxWebSocketEndpoint(SERVER, cfg, MuxGrpc.serverAcceptor(hubAddr));
 *         MuxGrpc.serverBuilder(hubAddr).addService(...).build().start();
 *         MuxGrpc.channelBuilder(new MuxAddress("cluster:x", () -> sessionOfX)).build();
 * worker: the mirror image with role CLIENT.
 * </pre>
 */
public final class MuxGrpc {

    private static final Logger log = LoggerFactory.getLogger(MuxGrpc.class);

    private MuxGrpc() {
    }

    /**
     * A channel builder whose transport connects by opening a new stream on the address's current
     * session; channel type, event loop group (the session's own loop, {@link SessionLoops}) and
     * plaintext (TLS is the WebSocket's job) are preset.
     */
    public static NettyChannelBuilder channelBuilder(MuxAddress address) {
        Objects.requireNonNull(address, "address");
        return NettyChannelBuilder.forAddress(address)
                .channelType(MuxStreamChannel.class, MuxAddress.class)
                .eventLoopGroup(new SessionLoops(address::currentSession, MuxEventLoops.shared()))
                .usePlaintext();
    }

    /**
     * A server builder whose server channel binds {@code address}'s name; streams given to
     * {@link #serverAcceptor(MuxAddress)} for that name become server connections.
     */
    public static NettyServerBuilder serverBuilder(MuxAddress address) {
        Objects.requireNonNull(address, "address");
        return NettyServerBuilder.forAddress(address)
                .channelType(MuxServerChannel.class)
                .bossEventLoopGroup(MuxEventLoops.shared())
                .workerEventLoopGroup(new SessionLoops(null, MuxEventLoops.shared()));
    }

    /**
     * An acceptor that hands every peer-opened stream to the server bound at {@code address}'s
     * name at that moment; with no server bound the stream is refused with RST.
     */
    public static MuxStreamAcceptor serverAcceptor(MuxAddress address) {
        String name = Objects.requireNonNull(address, "address").name();
        return new MuxChildAcceptor() {
            @Override
            public void acceptUnregistered(MuxSession session, Channel stream) {
                MuxServerChannel server = MuxServerChannel.bound(name);
                if (server == null) {
                    log.debug("no mux gRPC server bound at {}; refusing stream", name);
                    ((MuxStreamChannel) stream).reset();
                    return;
                }
                server.acceptStream((MuxStreamChannel) stream);
            }
        };
    }
}
