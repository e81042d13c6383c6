package io.agentbox.mux;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalIoHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;

/** The shared event-loop group used when {@link MuxConfig#eventLoopGroup()} is not set. */
public final class MuxEventLoops {

    private MuxEventLoops() {
    }

    /** Lazily created daemon group with one loop per CPU; never shut down (lives as long as the JVM). */
    public static EventLoopGroup shared() {
        return Holder.GROUP;
    }

    /**
     * Lazily created daemon NIO group with one loop per CPU for WebSocket connections made or
     * accepted by the Netty adapter ({@code io.agentbox.mux.netty}); never shut down.
     */
    public static EventLoopGroup sharedSockets() {
        return SocketHolder.GROUP;
    }

    private static final class SocketHolder {
        static final EventLoopGroup GROUP = new MultiThreadIoEventLoopGroup(
                0, new DefaultThreadFactory("agentbox-mux-io", true), NioIoHandler.newFactory());
    }

    private static final class Holder {
        // Stream channels do no socket I/O; a local I/O handler is just a task loop.
        static final EventLoopGroup GROUP = new MultiThreadIoEventLoopGroup(
                0, new DefaultThreadFactory("agentbox-mux", true), LocalIoHandler.newFactory());
    }
}
