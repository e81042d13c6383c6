package io.agentbox.worker.image;

import io.agentbox.protocol.image.RegistryHost;
import java.util.Collection;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * How this worker talks to registries, from its command line ({@code agentbox worker} and
 * {@code agentbox standalone}): the registry client reads it.
 *
 * @param insecure registries ({@code host:port}, lowercased) spoken to over plain HTTP
 *     ({@code --insecure-registry}); every other registry is HTTPS only
 */
public record RegistrySettings(Set<String> insecure) {
    public static final RegistrySettings DEFAULT = new RegistrySettings(Set.of());

    public RegistrySettings {
        insecure = Set.copyOf(insecure);
    }

    /**
     * Settings from {@code --insecure-registry} values.
     *
     * @throws IllegalArgumentException naming the value that is not {@code HOST:PORT}
     */
    public static RegistrySettings of(Collection<String> insecureRegistries) {
        Set<String> out = new TreeSet<>();
        for (String r : insecureRegistries) {
            out.add(RegistryHost.parse(r, true));
        }
        return new RegistrySettings(out);
    }

    /** True when {@code registry} ({@link io.agentbox.protocol.image.ImageReference#registry()}) is plain HTTP. */
    public boolean isInsecure(String registry) {
        return insecure.contains(registry.toLowerCase(Locale.ROOT));
    }
}
