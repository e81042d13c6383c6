package io.agentbox.wsproxy.sync;

import io.agentbox.protocol.v1.ApiKey;
import io.agentbox.protocol.v1.ClusterConfig;
import io.agentbox.protocol.v1.Template;

/**
 * The three collections the hub pushes to every worker. Whoever owns the data (the hub store)
 * feeds committed changes into these caches with its own resource versions.
 *
 * @param templates a template with a non-empty {@code clusters} list is pushed only to those clusters
 * @param clusterConfigs one item per cluster (keyed by cluster id); each worker watches its own
 */
public record HubWatches(WatchCache<Template> templates, WatchCache<ApiKey> apiKeys, WatchCache<ClusterConfig> clusterConfigs) {

    /** Watch names used in {@code CapacityReport.applied_versions}. */
    public static final String TEMPLATES = "templates";
    public static final String API_KEYS = "api-keys";
    public static final String CONFIG = "config";

    /** Empty caches at version 0 (nothing has changed yet). */
    public static HubWatches empty() {
        return new HubWatches(new WatchCache<>(Template::getName), new WatchCache<>(ApiKey::getKeyHash),
                new WatchCache<>(ClusterConfig::getClusterId));
    }

    /** Whether {@code cluster} runs {@code template}'s pool. */
    public static boolean targets(Template template, String cluster) {
        return template.getClustersCount() == 0 || template.getClustersList().contains(cluster);
    }
}
