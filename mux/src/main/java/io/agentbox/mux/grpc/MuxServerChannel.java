package io.agentbox.mux.grpc;

import io.agentbox.mux.MuxStreamChannel;
import io.agentbox.mux.MuxStreamChannelConfig;
import io.netty.channel.AbstractServerChannel;
import io.netty.channel.ChannelConfig;
import io.netty.channel.EventLoop;
import java.net.BindException;
import java.net.SocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A Netty server channel that "accepts" mux streams: bind it to a {@link MuxAddress} and streams
 * handed over by {@link MuxGrpc#serverAcceptor(MuxAddress)} for that name become its children
 * (registered by the {@code ServerBootstrap} on its child group). One bound channel per name in
 * the JVM; closing the channel unbinds the name. Used by {@code NettyServerBuilder.channelType}.
 */
public final class MuxServerChannel extends AbstractServerChannel {

    private static final Map<String, MuxServerChannel> BOUND = new ConcurrentHashMap<>();

    private final ChannelConfig config = new MuxStreamChannelConfig(this);
    private volatile MuxAddress local;
    private volatile boolean open = true;

    public MuxServerChannel() {
    }

    /** The channel bound to {@code name}, or {@code null}. */
    static MuxServerChannel bound(String name) {
        return BOUND.get(name);
    }

    /** Fires {@code stream} into this channel's pipeline (ServerBootstrap registers it); RST if closed. */
    void acceptStream(MuxStreamChannel stream) {
        EventLoop loop = eventLoop();
        loop.execute(() -> {
            if (!isActive()) {
                stream.reset();
                return;
            }
            pipeline().fireChannelRead(stream);
            pipeline().fireChannelReadComplete();
        });
    }

    @Override
    public ChannelConfig config() {
        return config;
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public boolean isActive() {
        return open && local != null;
    }

    @Override
    protected boolean isCompatible(EventLoop loop) {
        return true;
    }

    @Override
    protected SocketAddress localAddress0() {
        return local;
    }

    @Override
    protected void doBind(SocketAddress localAddress) throws Exception {
        if (!(localAddress instanceof MuxAddress address)) {
            throw new BindException("MuxServerChannel binds only to a MuxAddress, not " + localAddress);
        }
        if (BOUND.putIfAbsent(address.name(), this) != null) {
            throw new BindException("a mux server is already bound to " + address);
        }
        local = address;
    }

    @Override
    protected void doClose() {
        open = false;
        MuxAddress a = local;
        if (a != null) {
            BOUND.remove(a.name(), this);
        }
    }

    @Override
    protected void doBeginRead() {
        // streams are pushed by the session as they arrive, bounded by the session's accept backlog
    }
}
