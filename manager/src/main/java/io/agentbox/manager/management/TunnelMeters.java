package io.agentbox.manager.management;

import io.agentbox.mux.MuxSession;
import io.agentbox.mux.util.DaemonThreads;
import io.agentbox.wsproxy.ClusterTunnel;
import io.agentbox.wsproxy.TunnelRegistry;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Per-cluster tunnel meters over the mux sessions' own counters (mux knows nothing of Micrometer):
 * {@code agentbox_tunnel_streams{cluster}} (open streams), {@code agentbox_tunnel_bytes_total{cluster,direction}}
 * ({@code in}: from the worker, {@code out}: to it; frame headers included) and
 * {@code agentbox_tunnel_rtt_seconds{cluster}} (the last ping's round trip; NaN while disconnected).
 * A cluster's series appear at its first connect and stay; its byte counters carry on across
 * reconnects (the ended sessions' bytes are kept). Every {@link #PING_INTERVAL} the hub pings each
 * connected worker so the round trip stays fresh on busy tunnels too (keepalive pings only go
 * out on quiet ones).
 */
final class TunnelMeters implements AutoCloseable {
    static final Duration PING_INTERVAL = Duration.ofSeconds(10);

    private final TunnelRegistry tunnels;
    private final MeterRegistry registry;
    private final Map<String, Traffic> clusters = new ConcurrentHashMap<>();
    private final ScheduledExecutorService pinger = Executors.newSingleThreadScheduledExecutor(
            DaemonThreads.named("agentbox-tunnel-ping"));

    TunnelMeters(TunnelRegistry tunnels, MeterRegistry registry) {
        this.tunnels = tunnels;
        this.registry = registry;
        tunnels.addConnectListener(this::connected);
        tunnels.connected().forEach(t -> connected(t.clusterId()));
        long every = PING_INTERVAL.toMillis();
        pinger.scheduleWithFixedDelay(this::pingAll, every, every, TimeUnit.MILLISECONDS);
    }

    private void connected(String clusterId) {
        ClusterTunnel t = tunnels.get(clusterId);
        if (t == null) {
            return;
        }
        Traffic traffic = clusters.computeIfAbsent(clusterId, this::register);
        traffic.attach(t.session());
        t.session().ping(); // a first round trip right away
    }

    private Traffic register(String clusterId) {
        Traffic t = new Traffic();
        Gauge.builder("agentbox.tunnel.streams", () -> {
            MuxSession s = tunnels.session(clusterId);
            return s == null ? 0 : s.streamCount();
        }).description("open streams on the cluster's tunnel").tag("cluster", clusterId).register(registry);
        FunctionCounter.builder("agentbox.tunnel.bytes", t, x -> x.total(true)).baseUnit("bytes")
                .description("bytes over the cluster's tunnel").tags("cluster", clusterId, "direction", "in")
                .register(registry);
        FunctionCounter.builder("agentbox.tunnel.bytes", t, x -> x.total(false)).baseUnit("bytes")
                .description("bytes over the cluster's tunnel").tags("cluster", clusterId, "direction", "out")
                .register(registry);
        Gauge.builder("agentbox.tunnel.rtt", () -> {
            MuxSession s = tunnels.session(clusterId);
            Duration rtt = s == null ? null : s.lastRoundTrip();
            return rtt == null ? Double.NaN : rtt.toNanos() / 1e9;
        }).baseUnit("seconds").description("round trip of the last ping over the cluster's tunnel")
                .tag("cluster", clusterId).register(registry);
        return t;
    }

    private void pingAll() {
        for (ClusterTunnel t : tunnels.connected()) {
            t.session().ping(); // the answer lands in lastRoundTrip(); a failure ends the session anyway
        }
    }

    @Override
    public void close() {
        pinger.shutdownNow();
    }

    /** A cluster's bytes: the current session's counters plus those of the sessions before it. */
    private static final class Traffic {
        private MuxSession current;
        private long endedIn;
        private long endedOut;

        synchronized void attach(MuxSession session) {
            if (current == session) {
                return;
            }
            retire(current);
            current = session;
            session.closeFuture().whenComplete((v, e) -> {
                synchronized (this) {
                    if (current == session) {
                        retire(session);
                        current = null;
                    }
                }
            });
        }

        // guarded by this
        private void retire(MuxSession s) {
            if (s != null) {
                endedIn += s.bytesReceived();
                endedOut += s.bytesSent();
            }
        }

        synchronized double total(boolean in) {
            MuxSession s = current;
            long live = s == null ? 0 : in ? s.bytesReceived() : s.bytesSent();
            return (in ? endedIn : endedOut) + live;
        }
    }
}
