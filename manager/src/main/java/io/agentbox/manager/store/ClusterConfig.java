package io.agentbox.manager.store;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import io.agentbox.worker.image.RegistryAuth;

/**
 * Settings the hub pushes to one cluster's worker.
 *
 * @param hostAliases extra {@code /etc/hosts} entries for that cluster's sandboxes (at most 256)
 * @param settings    free-form string settings (at most 256 entries; keys 1-256 chars, values up to 4096);
 *                    {@code registry.auth.<host[:port]>} holds a registry's credentials as
 *                    {@code {"username","password"}} ({@link RegistryAuth}), checked here
 */
public record ClusterConfig(List<HostAlias> hostAliases, Map<String, String> settings) {
    public static final ClusterConfig EMPTY = new ClusterConfig(List.of(), Map.of());
    private static final Pattern IPV4 = Pattern.compile("((25[0-5]|2[0-4]\\d|1?\\d?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1?\\d?\\d)");
    private static final Pattern IPV6 = Pattern.compile("[0-9a-fA-F:.]{2,45}");
    private static final Pattern HOSTNAME = Pattern.compile(
            "(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*");

    /**
     * One {@code /etc/hosts} line.
     *
     * @param ip        IPv4 or IPv6 literal
     * @param hostnames 1-16 DNS names
     */
    public record HostAlias(String ip, List<String> hostnames) {
        @JsonCreator
        public HostAlias(@JsonProperty("ip") String ip, @JsonProperty("hostnames") List<String> hostnames) {
            this.ip = ip;
            this.hostnames = hostnames == null ? List.of() : List.copyOf(hostnames);
        }
    }

    @JsonCreator
    public ClusterConfig(@JsonProperty("hostAliases") List<HostAlias> hostAliases,
                         @JsonProperty("settings") Map<String, String> settings) {
        this.hostAliases = hostAliases == null ? List.of() : List.copyOf(hostAliases);
        this.settings = settings == null ? Map.of() : Map.copyOf(settings);
    }

    /** @throws StoreException INVALID_ARGUMENT naming the first bad entry */
    ClusterConfig validate() {
        if (hostAliases.size() > Checks.MAX_MAP_ENTRIES) {
            throw StoreException.invalid("at most " + Checks.MAX_MAP_ENTRIES + " host aliases");
        }
        for (HostAlias a : hostAliases) {
            if (a == null || a.ip() == null || !(IPV4.matcher(a.ip()).matches()
                    || (a.ip().contains(":") && IPV6.matcher(a.ip()).matches()))) {
                throw StoreException.invalid("host alias ip must be an IPv4 or IPv6 literal, got '"
                        + (a == null ? null : a.ip()) + "'");
            }
            if (a.hostnames().isEmpty() || a.hostnames().size() > 16) {
                throw StoreException.invalid("host alias " + a.ip() + " needs 1-16 hostnames");
            }
            for (String h : a.hostnames()) {
                if (h == null || !HOSTNAME.matcher(h).matches()) {
                    throw StoreException.invalid("invalid hostname '" + h + "' for " + a.ip());
                }
            }
        }
        Checks.stringMap("settings", settings);
        for (Map.Entry<String, String> e : settings.entrySet()) {
            if (RegistryAuth.isSetting(e.getKey())) {
                try {
                    RegistryAuth.registryOf(e.getKey());
                    RegistryAuth.parse(e.getValue());
                } catch (IllegalArgumentException bad) { // the message never quotes the value: it holds a password
                    throw StoreException.invalid("settings." + e.getKey() + ": " + bad.getMessage());
                }
            }
        }
        return this;
    }
}
