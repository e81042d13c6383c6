package io.agentbox.protocol.image;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * A registry's {@code host[:port]} as {@link ImageReference#registry()} names it, checked and
 * lowercased, for settings keyed by registry (insecure registries, credentials). Docker Hub's
 * aliases ({@code index.docker.io}, {@code registry-1.docker.io}) become {@code docker.io}.
 */
public final class RegistryHost {
    private static final Pattern HOST = Pattern.compile(
            "(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)(?:\\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\\[[0-9a-f:.]+\\]");

    private RegistryHost() {}

    /**
     * @param text {@code host}, {@code host:port} or {@code [ipv6]:port}
     * @param requirePort true when the port must be given
     * @return the lowercased form
     * @throws IllegalArgumentException naming what is wrong with {@code text}
     */
    public static String parse(String text, boolean requirePort) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("registry host is empty");
        }
        String t = text.toLowerCase(Locale.ROOT);
        String host = t;
        int colon = t.lastIndexOf(':');
        if (colon > t.lastIndexOf(']')) {
            host = t.substring(0, colon);
            String port = t.substring(colon + 1);
            int p;
            try {
                p = port.length() > 5 ? -1 : Integer.parseInt(port);
            } catch (NumberFormatException e) {
                p = -1;
            }
            if (p < 1 || p > 65535) {
                throw new IllegalArgumentException("registry '" + text + "': port must be 1..65535, got '" + port + "'");
            }
        } else if (requirePort) {
            throw new IllegalArgumentException("registry '" + text + "' must be HOST:PORT");
        }
        if (host.length() > 253 || !HOST.matcher(host).matches()) {
            throw new IllegalArgumentException("registry '" + text + "': invalid host '" + host + "'");
        }
        if (t.equals("index.docker.io") || t.equals(ImageReference.DOCKER_HUB_API_HOST)) {
            return ImageReference.DOCKER_HUB;
        }
        return t;
    }
}
