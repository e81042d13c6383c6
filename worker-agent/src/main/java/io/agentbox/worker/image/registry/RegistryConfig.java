package io.agentbox.worker.image.registry;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Settings of a {@link RegistryClient}.
 *
 * @param insecureRegistries registries ({@code host:port} as written in image references, matched
 *     case-insensitively) spoken to over plain HTTP instead of HTTPS; bearer tokens and passwords
 *     travel in clear to these and only these
 * @param credentials username and password per registry ({@code host[:port]}; {@code docker.io},
 *     {@code index.docker.io} and {@code registry-1.docker.io} all mean Docker Hub), used for
 *     Basic challenges and to ask a token service for bearer tokens
 * @param platform the platform picked from multi-platform images
 * @param limits size and retry limits
 * @param timeouts network timeouts
 */
public record RegistryConfig(Set<String> insecureRegistries, Map<String, Credentials> credentials, Platform platform,
                             Limits limits, Timeouts timeouts) {

    public RegistryConfig {
        insecureRegistries = insecureRegistries.stream().map(RegistryConfig::key).collect(Collectors.toUnmodifiableSet());
        credentials = credentials.entrySet().stream()
                .collect(Collectors.toUnmodifiableMap(e -> key(e.getKey()), Map.Entry::getValue));
        if (platform == null || limits == null || timeouts == null) {
            throw new IllegalArgumentException("registry config needs a platform, limits and timeouts");
        }
    }

    /** No insecure registries, no credentials, this JVM's platform, default limits and timeouts. */
    public static RegistryConfig defaults() {
        return new RegistryConfig(Set.of(), Map.of(), Platform.current(), Limits.DEFAULT, Timeouts.DEFAULT);
    }

    public RegistryConfig withInsecure(Set<String> registries) {
        return new RegistryConfig(registries, credentials, platform, limits, timeouts);
    }

    public RegistryConfig withCredentials(Map<String, Credentials> perRegistry) {
        return new RegistryConfig(insecureRegistries, perRegistry, platform, limits, timeouts);
    }

    public RegistryConfig withPlatform(Platform p) {
        return new RegistryConfig(insecureRegistries, credentials, p, limits, timeouts);
    }

    public RegistryConfig withLimits(Limits l) {
        return new RegistryConfig(insecureRegistries, credentials, platform, l, timeouts);
    }

    public RegistryConfig withTimeouts(Timeouts t) {
        return new RegistryConfig(insecureRegistries, credentials, platform, limits, t);
    }

    /** Whether {@code registry} (host[:port]) is spoken to over plain HTTP. */
    public boolean isInsecure(String registry) {
        return insecureRegistries.contains(key(registry));
    }

    /** Credentials for {@code registry} (host[:port]) or null. */
    public Credentials credentialsFor(String registry) {
        return credentials.get(key(registry));
    }

    /** Lowercased host[:port] with Docker Hub's aliases folded into {@code docker.io}. */
    static String key(String registry) {
        String k = registry.toLowerCase(Locale.ROOT);
        return switch (k) {
            case "index.docker.io", "registry-1.docker.io" -> "docker.io";
            default -> k;
        };
    }

    /** A username and password (or token used as password, as GHCR does). */
    public record Credentials(String username, String password) {
        public Credentials {
            if (username == null || password == null) {
                throw new IllegalArgumentException("registry credentials need a username and a password");
            }
        }

        @Override
        public String toString() {
            return "Credentials[" + username + ", ****]";
        }
    }

    /**
     * @param maxManifestBytes largest manifest or index read (bytes)
     * @param maxConfigBytes largest config blob read (bytes)
     * @param maxAttempts attempts per request when the registry answers 429/503, and attempts in a
     *     row that bring no new bytes of a blob
     * @param maxBlobDownloadsPerRegistry blob downloads running at once against one registry
     * @param maxBackoff longest single wait before a retry; a registry asking for more
     *     ({@code Retry-After}) fails the pull instead
     */
    public record Limits(long maxManifestBytes, long maxConfigBytes, int maxAttempts, int maxBlobDownloadsPerRegistry,
                         Duration maxBackoff) {
        public static final Limits DEFAULT = new Limits(4L << 20, 8L << 20, 5, 4, Duration.ofSeconds(30));

        public Limits {
            if (maxManifestBytes <= 0 || maxConfigBytes <= 0 || maxAttempts < 1 || maxBlobDownloadsPerRegistry < 1
                    || maxBackoff.isNegative()) {
                throw new IllegalArgumentException("registry limits must be positive");
            }
        }
    }

    /**
     * @param connect TCP connect (and TLS handshake) timeout
     * @param request whole-exchange timeout for manifests, tokens and config blobs
     * @param idle longest silence while a blob streams before the read counts as cut
     */
    public record Timeouts(Duration connect, Duration request, Duration idle) {
        public static final Timeouts DEFAULT = new Timeouts(Duration.ofSeconds(10), Duration.ofSeconds(60),
                Duration.ofSeconds(30));
    }
}
