package io.agentbox.worker.image.registry;

import java.util.Locale;

/**
 * Media types of the OCI image spec ({@code media-types.md}) and of Docker's image manifest
 * v2 schema 2 / manifest list, as registries send them in {@code Content-Type}.
 */
final class MediaTypes {
    static final String OCI_INDEX = "application/vnd.oci.image.index.v1+json";
    static final String OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
    static final String OCI_CONFIG = "application/vnd.oci.image.config.v1+json";
    static final String DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json";
    static final String DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json";
    static final String DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json";
    static final String DOCKER_SCHEMA1 = "application/vnd.docker.distribution.manifest.v1+json";
    static final String DOCKER_SCHEMA1_SIGNED = "application/vnd.docker.distribution.manifest.v1+prettyjws";

    /** Accept header for manifest GETs: indexes first, then single-platform manifests. */
    static final String MANIFEST_ACCEPT = String.join(", ", OCI_INDEX, DOCKER_LIST, OCI_MANIFEST, DOCKER_MANIFEST);

    private MediaTypes() {}

    /** The media type part of a Content-Type value, lowercased, without parameters; "" for null. */
    static String base(String contentType) {
        if (contentType == null) {
            return "";
        }
        int semi = contentType.indexOf(';');
        return (semi >= 0 ? contentType.substring(0, semi) : contentType).trim().toLowerCase(Locale.ROOT);
    }
}
