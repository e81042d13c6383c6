package io.agentbox.protocol.image;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * An OCI image reference, normalised the way Docker normalises what users type:
 * {@code python:3.12} is {@code docker.io/library/python:3.12}, {@code org/app} is
 * {@code docker.io/org/app:latest}, {@code 127.0.0.1:5000/app@sha256:<64 hex>} keeps its
 * registry and digest. The first path component is a registry when it holds a '.' or a ':' or is
 * {@code localhost}; otherwise the image is on Docker Hub.
 *
 * <p>Grammar (distribution/reference): repository components are lowercase
 * {@code [a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*} joined by '/'; a tag is
 * {@code [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}}; a digest is {@code sha256:} and 64 lowercase hex
 * digits (the only algorithm we accept). With both tag and digest the digest decides what is
 * pulled and the tag is kept for display.
 *
 * @param registry registry host[:port] as typed, {@code docker.io} for Docker Hub
 * @param repository repository path inside the registry, {@code library/NAME} for official images
 * @param tag tag, {@code latest} when neither tag nor digest was given; null with a digest only
 * @param digest {@code sha256:<hex>} or null
 */
public record ImageReference(String registry, String repository, String tag, String digest) {
    public static final String DOCKER_HUB = "docker.io";
    /** Host that serves Docker Hub's registry API. */
    public static final String DOCKER_HUB_API_HOST = "registry-1.docker.io";
    /**
     * Pseudo-registry of images AgentBox builds (template builds): no registry answers it; the hub
     * keeps their blobs and workers read them over the tunnel (docs/template-builds.md).
     */
    public static final String BUILDS_REGISTRY = "builds.agentbox.internal";
    /** Longest reference accepted, as Docker's reference package allows. */
    public static final int MAX_LENGTH = 255;

    private static final Pattern COMPONENT = Pattern.compile("[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*");
    private static final Pattern TAG = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}");
    private static final Pattern HOST = Pattern.compile(
            "(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*"
                    + "|\\[[0-9A-Fa-f:.]+\\]");

    /**
     * Parses and normalises {@code text}.
     *
     * @throws IllegalArgumentException with a message naming what is wrong (empty, too long,
     *     uppercase repository, bad tag, bad digest, bad registry port)
     */
    public static ImageReference parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("image reference is empty");
        }
        if (text.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("image reference is longer than " + MAX_LENGTH + " characters");
        }
        String rest = text;
        String digest = null;
        int at = rest.indexOf('@');
        if (at >= 0) {
            digest = rest.substring(at + 1);
            rest = rest.substring(0, at);
            if (!BlobStreams.isDigest(digest)) {
                throw new IllegalArgumentException("image reference '" + text
                        + "': digest must be sha256: followed by 64 lowercase hex digits");
            }
        }
        String tag = null;
        int slash = rest.lastIndexOf('/');
        int colon = rest.lastIndexOf(':');
        if (colon > slash) {
            tag = rest.substring(colon + 1);
            rest = rest.substring(0, colon);
            if (!TAG.matcher(tag).matches()) {
                throw new IllegalArgumentException("image reference '" + text + "': invalid tag '" + tag + "'");
            }
        }
        String registry = DOCKER_HUB;
        String path = rest;
        int first = rest.indexOf('/');
        if (first > 0) {
            String head = rest.substring(0, first);
            if (head.contains(".") || head.contains(":") || head.equals("localhost")) {
                registry = head;
                path = rest.substring(first + 1);
                checkRegistry(text, registry);
            }
        }
        if (path.isEmpty()) {
            throw new IllegalArgumentException("image reference '" + text + "' names no repository");
        }
        for (String c : path.split("/", -1)) {
            if (!COMPONENT.matcher(c).matches()) {
                throw new IllegalArgumentException("image reference '" + text + "': invalid repository component '" + c
                        + "' (lowercase letters, digits and single separators . _ __ -)");
            }
        }
        if (registry.equals("index.docker.io") || registry.equals(DOCKER_HUB_API_HOST)) {
            registry = DOCKER_HUB;
        }
        if (registry.equals(DOCKER_HUB) && !path.contains("/")) {
            path = "library/" + path;
        }
        if (tag == null && digest == null) {
            tag = "latest";
        }
        return new ImageReference(registry, path, tag, digest);
    }

    private static void checkRegistry(String text, String registry) {
        String host = registry;
        int colon = registry.lastIndexOf(':');
        if (colon > registry.lastIndexOf(']')) {
            host = registry.substring(0, colon);
            String port = registry.substring(colon + 1);
            int p;
            try {
                p = Integer.parseInt(port);
            } catch (NumberFormatException e) {
                p = -1;
            }
            if (p < 1 || p > 65535) {
                throw new IllegalArgumentException("image reference '" + text + "': invalid registry port '" + port + "'");
            }
        }
        if (!HOST.matcher(host).matches()) {
            throw new IllegalArgumentException("image reference '" + text + "': invalid registry host '" + host + "'");
        }
    }

    /** Host[:port] to send registry API requests to ({@code registry-1.docker.io} for Docker Hub). */
    public String apiHost() {
        return registry.equals(DOCKER_HUB) ? DOCKER_HUB_API_HOST : registry;
    }

    /** What the registry API is asked for: the digest when there is one, else the tag. */
    public String manifestReference() {
        return digest != null ? digest : tag;
    }

    /** The same image pinned to {@code manifestDigest} (the tag kept for display). */
    public ImageReference withDigest(String manifestDigest) {
        return new ImageReference(registry, repository, tag, manifestDigest);
    }

    /** Fully qualified form: {@code registry/repository[:tag][@digest]}. */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder(registry).append('/').append(repository);
        if (tag != null) {
            b.append(':').append(tag);
        }
        if (digest != null) {
            b.append('@').append(digest);
        }
        return b.toString();
    }

    /** Lowercased registry host for matching against settings such as insecure registries. */
    public String registryKey() {
        return registry.toLowerCase(Locale.ROOT);
    }
}
