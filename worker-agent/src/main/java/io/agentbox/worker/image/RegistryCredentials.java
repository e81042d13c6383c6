package io.agentbox.worker.image;

import io.agentbox.protocol.image.RegistryHost;
import io.agentbox.protocol.v1.ConfigEntry;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registry credentials the hub pushed to this worker's cluster, kept live: every new cluster
 * config replaces them (see {@link RegistryAuth} for the setting convention; the worker receives
 * settings as config entries {@code setting/<name>}). The registry client looks a registry up at
 * each pull, so a changed password applies to the next pull. Thread-safe.
 */
public final class RegistryCredentials {
    /** Config-entry prefix of cluster settings in the replicated cluster config. */
    public static final String ENTRY_PREFIX = "setting/" + RegistryAuth.SETTING_PREFIX;
    private static final Logger log = LoggerFactory.getLogger(RegistryCredentials.class);

    private volatile Map<String, RegistryAuth> byRegistry = Map.of();

    /**
     * Credentials for {@code registry} ({@link io.agentbox.protocol.image.ImageReference#registry()};
     * Docker Hub's aliases are one registry), or empty for anonymous access.
     */
    public Optional<RegistryAuth> lookup(String registry) {
        String key;
        try {
            key = RegistryHost.parse(registry, false);
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
        return Optional.ofNullable(byRegistry.get(key));
    }

    /** Registries that have credentials, for status output (no secrets). */
    public Set<String> registries() {
        return new TreeSet<>(byRegistry.keySet());
    }

    /**
     * Replaces everything with what {@code config} holds (the full replicated cluster config). An
     * entry that does not follow the convention is skipped with a warning naming only its key (the
     * hub refuses such values, so this means an older or foreign hub).
     */
    public void apply(List<ConfigEntry> config) {
        Map<String, RegistryAuth> next = new HashMap<>();
        for (ConfigEntry e : config) {
            if (!e.getKey().startsWith(ENTRY_PREFIX)) {
                continue;
            }
            String setting = e.getKey().substring("setting/".length());
            try {
                next.put(RegistryAuth.registryOf(setting), RegistryAuth.parse(e.getValue()));
            } catch (IllegalArgumentException bad) {
                log.warn("ignoring cluster setting '{}': {}", setting, bad.getMessage());
            }
        }
        byRegistry = Map.copyOf(next);
    }
}
