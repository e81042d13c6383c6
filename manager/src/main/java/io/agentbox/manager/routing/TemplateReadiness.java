package io.agentbox.manager.routing;

import io.agentbox.protocol.image.PoolReadiness;
import io.agentbox.protocol.v1.PoolCapacity;
import io.agentbox.wsproxy.ClusterTunnel;
import io.agentbox.wsproxy.TunnelRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * A template's readiness over the clusters that run it, from their last capacity reports
 * ({@code PoolCapacity.status}, sync.proto): {@code ready} if any cluster is ready; else
 * {@code pulling} with the progress of the clusters pulling; else {@code error} with each
 * cluster's error. Messages name the cluster, e.g.
 * {@code pulling docker.io/library/python:3.12 on cluster c1: 3/7 layers, 412/1630 MB}.
 */
public final class TemplateReadiness {

    /**
     * @param status {@code pulling}, {@code ready}, {@code error}, or null when no connected cluster
     *     reports a pool of the template
     * @param message what the clusters that are not ready say (joined with "; "), or why the
     *     status is null; empty when every reporting cluster is ready
     */
    public record Status(String status, String message) {
        public boolean ready() {
            return PoolReadiness.READY.equals(status);
        }
    }

    private TemplateReadiness() {}

    /**
     * @param image the template's image reference (for messages), may be empty
     * @param reports per cluster id, its last report of this template's pool
     */
    public static Status aggregate(String template, String image, Map<String, PoolCapacity> reports) {
        if (reports.isEmpty()) {
            return new Status(null, "no connected cluster reports a pool of template '" + template + "'");
        }
        List<String> pulling = new ArrayList<>();
        List<String> errors = new ArrayList<>();
        boolean ready = false;
        for (Map.Entry<String, PoolCapacity> e : new TreeMap<>(reports).entrySet()) {
            PoolCapacity p = e.getValue();
            String status = PoolReadiness.status(p);
            switch (status) {
                case PoolReadiness.READY -> ready = true;
                case PoolReadiness.PULLING -> pulling.add(PoolReadiness.describe(status, image, e.getKey(), p.getStatusMessage()));
                default -> errors.add(PoolReadiness.describe(status, image, e.getKey(), p.getStatusMessage()));
            }
        }
        List<String> notReady = new ArrayList<>(pulling);
        notReady.addAll(errors);
        if (ready) {
            return new Status(PoolReadiness.READY, String.join("; ", notReady));
        }
        return new Status(pulling.isEmpty() ? PoolReadiness.ERROR : PoolReadiness.PULLING, String.join("; ", notReady));
    }

    /** The aggregate over the connected clusters accepted by {@code cluster} that report a pool of {@code template}. */
    public static Status of(TunnelRegistry registry, String template, String image, Predicate<String> cluster) {
        return aggregate(template, image, reports(registry, template, cluster));
    }

    static Map<String, PoolCapacity> reports(TunnelRegistry registry, String template, Predicate<String> cluster) {
        Map<String, PoolCapacity> out = new TreeMap<>();
        for (ClusterTunnel t : registry.connected()) {
            if (!cluster.test(t.clusterId())) {
                continue;
            }
            for (PoolCapacity p : t.pools()) {
                if (p.getTemplate().equals(template)) {
                    out.put(t.clusterId(), p);
                }
            }
        }
        return out;
    }
}
