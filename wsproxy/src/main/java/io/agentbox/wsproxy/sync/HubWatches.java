package io.agentbox.wsproxy.sync;

import io.agentbox.protocol.v1.ApiKey;
import io.agentbox.protocol.v1.ConfigEntry;
import io.agentbox.protocol.v1.Template;

/**
 * The three collections the hub pushes to every worker. Whoever owns the data (the hub store)
 * feeds committed changes into these caches with its own resource versions.
 *
 * @param configEntries cluster config; an entry's key is {@code <cluster id>/<name>} and each
 *     worker watches only its own cluster's entries (see {@link #configKey})
 */
public record HubWatches(WatchCache<Template> templates, WatchCache<ApiKey> apiKeys, WatchCache<ConfigEntry> configEntries) {

    /** Watch names used in {@code CapacityReport.applied_versions}. */
    public static final String TEMPLATES = "templates";
    public static final String API_KEYS = "api-keys";
    public static final String CONFIG = "config";

    /** Empty caches at version 0 (nothing has changed yet). */
    public static HubWatches empty() {
        return new HubWatches(new WatchCache<>(Template::getName), new WatchCache<>(ApiKey::getKeyHash),
                new WatchCache<>(ConfigEntry::getKey));
    }

    /** The cache key of config entry {@code name} of {@code clusterId}. */
    public static String configKey(String clusterId, String name) {
        return clusterId + "/" + name;
    }
}
