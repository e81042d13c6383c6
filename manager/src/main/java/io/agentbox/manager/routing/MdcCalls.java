package io.agentbox.manager.routing;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import org.slf4j.MDC;

/**
 * Carries the SLF4J MDC of the thread that starts a worker call (a request's, with its request id)
 * into the call's callbacks, which gRPC runs on its own threads: the stream relays (envd streams,
 * the native command stream, the terminal) then log with the request's id. Calls started without
 * an MDC pass through untouched.
 */
public final class MdcCalls implements ClientInterceptor {
    private static final MdcCalls INSTANCE = new MdcCalls();

    private MdcCalls() {}

    /** {@code router} with every channel it hands out intercepted. */
    public static ClusterRouter router(ClusterRouter router) {
        return new ClusterRouter() {
            @Override
            public Channel channel(String clusterId) {
                Channel c = router.channel(clusterId);
                return c == null ? null : ClientInterceptors.intercept(c, INSTANCE);
            }

            @Override
            public String pickCluster(String template) {
                return router.pickCluster(template);
            }

            @Override
            public String pickCluster(String template, Set<String> excluded) {
                return router.pickCluster(template, excluded);
            }

            @Override
            public String notReady(String template, String image, String onlyCluster) {
                return router.notReady(template, image, onlyCluster);
            }

            @Override
            public Collection<String> connectedClusters() {
                return router.connectedClusters();
            }

            @Override
            public Duration probeSilence(String clusterId) {
                return router.probeSilence(clusterId);
            }
        };
    }

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        ClientCall<Q, R> call = next.newCall(method, options);
        Map<String, String> mdc = MDC.getCopyOfContextMap();
        if (mdc == null || mdc.isEmpty()) {
            return call;
        }
        return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
            @Override
            public void start(Listener<R> listener, Metadata headers) {
                super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                    @Override
                    public void onHeaders(Metadata h) {
                        with(mdc, () -> super.onHeaders(h));
                    }

                    @Override
                    public void onMessage(R message) {
                        with(mdc, () -> super.onMessage(message));
                    }

                    @Override
                    public void onClose(Status status, Metadata trailers) {
                        with(mdc, () -> super.onClose(status, trailers));
                    }

                    @Override
                    public void onReady() {
                        with(mdc, super::onReady);
                    }
                }, headers);
            }
        };
    }

    /** Runs {@code r} with {@code mdc} (null: as is) as the thread's MDC, restoring the thread's own after. */
    public static void with(Map<String, String> mdc, Runnable r) {
        if (mdc == null) {
            r.run();
            return;
        }
        Map<String, String> before = MDC.getCopyOfContextMap();
        MDC.setContextMap(mdc);
        try {
            r.run();
        } finally {
            if (before == null) {
                MDC.clear();
            } else {
                MDC.setContextMap(before);
            }
        }
    }
}
