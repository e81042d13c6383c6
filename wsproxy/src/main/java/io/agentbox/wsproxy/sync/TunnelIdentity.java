package io.agentbox.wsproxy.sync;

import io.agentbox.mux.MuxStreamAddress;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.net.SocketAddress;
import java.util.function.Function;

/**
 * Binds each sync call to the cluster its tunnel authenticated as: a server interceptor that
 * resolves the call's transport (the mux stream it arrived on, whose remote address names its
 * session) to that session's authenticated cluster id and puts it in the gRPC {@link Context}
 * under {@link #CLUSTER_ID}. A call that did not come over an authenticated tunnel is closed with
 * UNAUTHENTICATED before any service code runs. {@link SyncServiceImpl} compares the id with the
 * {@code cluster_id} the request names.
 */
public final class TunnelIdentity implements ServerInterceptor {
    /** The authenticated cluster id of the current call's tunnel; null outside an intercepted call. */
    public static final Context.Key<String> CLUSTER_ID = Context.key("agentbox-tunnel-cluster-id");

    private final Function<SocketAddress, String> resolver;

    /** @param resolver the authenticated cluster id of a transport's remote address, or null when it has none */
    public TunnelIdentity(Function<SocketAddress, String> resolver) {
        this.resolver = resolver;
    }

    /** Resolves through the tunnels: the cluster whose open tunnel session carries the call. */
    public static TunnelIdentity of(ConnectedClusters registry) {
        return new TunnelIdentity(remote -> remote instanceof MuxStreamAddress a
                ? registry.authenticatedCluster(a.session()) : null);
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                        ServerCallHandler<Q, R> next) {
        String clusterId = resolver.apply(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
        if (clusterId == null) {
            call.close(Status.UNAUTHENTICATED.withDescription(
                    "sync calls must arrive over an open, authenticated cluster tunnel"), new Metadata());
            return new ServerCall.Listener<>() { };
        }
        return Contexts.interceptCall(Context.current().withValue(CLUSTER_ID, clusterId), call, headers, next);
    }
}
