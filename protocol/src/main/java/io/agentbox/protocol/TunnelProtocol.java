package io.agentbox.protocol;

/**
 * What a worker and the hub agree on when a tunnel opens (shared constants; the mux itself is in
 * module {@code mux}).
 *
 * <p>The worker dials {@code ws(s)://HUB:9003/v1/tunnel} with two headers: {@value #CLUSTER_ID_HEADER}
 * (its cluster id) and {@code Authorization: Bearer <cluster token>}. A wrong or missing token is
 * refused with HTTP 401 before the upgrade. After the upgrade the WebSocket carries one yamux
 * session: the worker is the yamux client (odd stream ids), the hub the server (even ids).
 */
public final class TunnelProtocol {
    public static final String PATH = "/v1/tunnel";
    public static final String CLUSTER_ID_HEADER = "X-Agentbox-Cluster-Id";
    public static final String AUTHORIZATION_HEADER = "Authorization";
    public static final String BEARER_PREFIX = "Bearer ";
    /** Default port of the tunnel endpoint. */
    public static final int DEFAULT_PORT = 9003;
    /** Per-stream window on the tunnel: larger than yamux's 256 KiB default so one stream can fill a WAN link. */
    public static final int STREAM_WINDOW_BYTES = 4 * 1024 * 1024;
    /** Mux address name of the hub's sync gRPC server (streams the worker opens). */
    public static final String HUB_SYNC_ADDRESS = "hub-sync";

    private TunnelProtocol() {}

    /** Mux address name of a worker's gRPC server (streams the hub opens). */
    public static String workerAddress(String clusterId) {
        return "worker:" + clusterId;
    }
}
