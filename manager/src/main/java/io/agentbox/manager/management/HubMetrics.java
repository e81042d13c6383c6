package io.agentbox.manager.management;

import io.agentbox.manager.store.HubStore;
import io.agentbox.wsproxy.TunnelRegistry;
import io.micrometer.core.instrument.Gauge;
import io.agentbox.manager.metrics.JvmMeters;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

/**
 * The hub's Prometheus registry, served at {@code /metrics} on the management port: JVM and
 * process meters plus {@code agentbox_clusters_connected}, {@code agentbox_clusters_registered},
 * {@code agentbox_store_resource_version} and the tunnels' meters ({@link TunnelMeters}); the
 * management API adds {@code agentbox_management_requests_total{method,route,status}}, the public
 * API (which records into this registry too) request latency and creates (docs/metrics.md#hub-metrics).
 */
public final class HubMetrics implements AutoCloseable {
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final Runnable jvmStop;
    private final TunnelMeters tunnelMeters;

    public HubMetrics(HubStore store, TunnelRegistry tunnels) {
        jvmStop = JvmMeters.bind(registry);
        Gauge.builder("agentbox.clusters.connected", tunnels, t -> t.connected().size())
                .description("worker clusters with an open tunnel").register(registry);
        Gauge.builder("agentbox.clusters.registered", store, s -> s.clusterStore().list().size())
                .description("clusters registered in the hub store").register(registry);
        Gauge.builder("agentbox.store.resource.version", store, s -> s.changeLog().currentVersion())
                .description("hub-wide resource version of keys, teams, templates and clusters").register(registry);
        this.tunnelMeters = new TunnelMeters(tunnels, registry);
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    @Override
    public void close() {
        tunnelMeters.close();
        jvmStop.run();
        registry.close();
    }
}
