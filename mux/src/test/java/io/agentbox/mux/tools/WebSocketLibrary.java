package io.agentbox.mux.tools;

import java.util.Locale;

/** Which WebSocket implementation carries the mux in the diagnostics tools. */
public enum WebSocketLibrary {
    /** Netty's codec ({@code io.agentbox.mux.netty}): the socket's event loop runs the session too. */
    NETTY,
    /** Jetty 12 WebSocket core ({@code io.agentbox.mux.jetty}). */
    JETTY;

    /** Parses {@code netty} or {@code jetty} (any case). */
    public static WebSocketLibrary parse(String name) {
        try {
            return valueOf(name.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown WebSocket library '" + name + "' (expected netty or jetty)");
        }
    }

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
