package io.agentbox.mux.grpc;

import io.agentbox.mux.MuxSession;
import io.agentbox.mux.MuxStreamChannel;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.AbstractEventExecutorGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The event-loop group gRPC gets for its mux connections: a connection's channel runs on the
 * event loop of the mux session it belongs to (the tunnel socket's loop), so a message crosses no
 * thread between the socket and gRPC's HTTP/2 codec. Before, gRPC registered its channels on the
 * shared stream group: two thread wake-ups per message per side, most of a unary call's round
 * trip over the tunnel on an idle machine (docs/benchmarks.md, the claim path).
 *
 * <p>Which session: for a server, the accepted stream's; for a client, the one {@code sessions}
 * returns when gRPC creates a transport (it picks its loop once per connection). Without a session
 * that runs on one loop, the fallback group. Lifecycle belongs to the sessions and the fallback:
 * shutting this group down does nothing.
 */
final class SessionLoops extends AbstractEventExecutorGroup implements EventLoopGroup {
    private final Supplier<MuxSession> sessions;
    private final EventLoopGroup fallback;

    /** @param sessions the client's current session (may return null); null for a server */
    SessionLoops(Supplier<MuxSession> sessions, EventLoopGroup fallback) {
        this.sessions = sessions == null ? () -> null : sessions;
        this.fallback = Objects.requireNonNull(fallback, "fallback");
    }

    @Override
    public EventLoop next() {
        EventLoop loop = loopOf(sessions.get());
        return loop != null ? loop : fallback.next();
    }

    private static EventLoop loopOf(MuxSession session) {
        return session == null ? null : session.eventLoop();
    }

    private EventLoop loopFor(Channel channel) {
        EventLoop loop = channel instanceof MuxStreamChannel stream ? loopOf(stream.session()) : null;
        return loop != null ? loop : next();
    }

    @Override
    public ChannelFuture register(Channel channel) {
        return loopFor(channel).register(channel);
    }

    @Override
    public ChannelFuture register(ChannelPromise promise) {
        return loopFor(promise.channel()).register(promise);
    }

    @Deprecated
    @Override
    public ChannelFuture register(Channel channel, ChannelPromise promise) {
        return register(promise);
    }

    @Override
    public Iterator<EventExecutor> iterator() {
        return fallback.iterator();
    }

    @Override
    public boolean isShuttingDown() {
        return fallback.isShuttingDown();
    }

    @Override
    public Future<?> shutdownGracefully(long quietPeriod, long timeout, TimeUnit unit) {
        return terminationFuture();
    }

    @Override
    public Future<?> terminationFuture() {
        return fallback.terminationFuture();
    }

    @Deprecated
    @Override
    public void shutdown() {
        // the sessions' loops and the fallback are not this group's to end
    }

    @Deprecated
    @Override
    public List<Runnable> shutdownNow() {
        return List.of();
    }

    @Override
    public boolean isShutdown() {
        return fallback.isShutdown();
    }

    @Override
    public boolean isTerminated() {
        return fallback.isTerminated();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return fallback.awaitTermination(timeout, unit);
    }
}
