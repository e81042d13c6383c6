package io.agentbox.mux.jetty;

import io.agentbox.mux.MuxConfig;
import java.time.Duration;
import org.eclipse.jetty.websocket.api.Configurable;

/** Jetty WebSocket settings a mux tunnel needs. */
public final class MuxWebSockets {

    private MuxWebSockets() {
    }

    /**
     * Raises Jetty's 64 KiB message and frame limits to {@link MuxConfig#maxTransportMessageBytes()},
     * uses 64 KiB I/O buffers, and sets the idle timeout to {@code max(90 s, 3 x keepalive interval)} (5 minutes if keepalive is off) instead of 30 s.
     * Works on a {@code ServerWebSocketContainer} and on a {@code WebSocketClient}.
     */
    public static void configure(Configurable target, MuxConfig config) {
        Duration ka = config.keepAliveInterval();
        Duration idle = ka.isZero() ? Duration.ofMinutes(5) : max(Duration.ofSeconds(90), ka.multipliedBy(3));
        configure(target, config, idle);
    }

    /** As {@link #configure(Configurable, MuxConfig)} with an explicit idle timeout. */
    public static void configure(Configurable target, MuxConfig config, Duration idleTimeout) {
        long limit = config.maxTransportMessageBytes();
        target.setMaxBinaryMessageSize(limit);
        target.setMaxFrameSize(limit);
        target.setInputBufferSize(64 * 1024);
        target.setOutputBufferSize(64 * 1024);
        target.setIdleTimeout(idleTimeout);
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }
}
