package io.agentbox.mux.netty;

import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.net.SocketAddress;
import java.util.Map;
import java.util.Objects;

/** Decides, before the WebSocket handshake, whether an upgrade request may proceed (e.g. authentication). */
@FunctionalInterface
public interface UpgradeGate {

    /** Accepts every request. */
    UpgradeGate ACCEPT_ALL = (request, remote) -> null;

    /**
     * Returns {@code null} to accept, or the refusal sent instead of the handshake. Runs on an
     * event loop: must not block.
     *
     * @param remote the peer's address, for logs
     */
    Refusal check(HttpRequest request, SocketAddress remote);

    /**
     * An HTTP status, a one-line reason sent as the {@code text/plain} body, and extra response
     * headers (e.g. {@code WWW-Authenticate}); the connection is closed after it.
     */
    record Refusal(HttpResponseStatus status, String message, Map<String, String> headers) {
        public Refusal {
            Objects.requireNonNull(status, "status");
            Objects.requireNonNull(message, "message");
            headers = Map.copyOf(headers);
        }

        public Refusal(HttpResponseStatus status, String message) {
            this(status, message, Map.of());
        }
    }
}
