package io.agentbox.worker.image.registry;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.worker.image.Descriptor;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Reads manifests and indexes (OCI image-spec {@code manifest.md} and {@code image-index.md},
 * Docker image manifest v2 schema 2 and manifest list). The kind is decided from the
 * {@code mediaType} in the body or, when the body has none (umoci and other tools omit it), from
 * Content-Type; the structure must agree, and alone decides when neither names a known type.
 */
public final class Manifests {
    enum Kind { INDEX, MANIFEST }

    private static final Set<String> INDEX_TYPES = Set.of(MediaTypes.OCI_INDEX, MediaTypes.DOCKER_LIST);
    private static final Set<String> MANIFEST_TYPES = Set.of(MediaTypes.OCI_MANIFEST, MediaTypes.DOCKER_MANIFEST);
    private static final Set<String> SCHEMA1_TYPES = Set.of(MediaTypes.DOCKER_SCHEMA1, MediaTypes.DOCKER_SCHEMA1_SIGNED);
    /** Content types that say nothing about the kind: the structure decides. */
    private static final Set<String> GENERIC_TYPES = Set.of("", "application/json", "application/octet-stream", "text/plain");
    private static final Set<String> CONFIG_TYPES = Set.of("", MediaTypes.OCI_CONFIG, MediaTypes.DOCKER_CONFIG);

    private Manifests() {}

    /**
     * @throws UnsupportedManifestException for schema 1, artifacts, bodies whose structure
     *     contradicts their declared type, and anything that is neither manifest nor index
     */
    static Kind classify(String contentType, JsonNode root, String what) throws UnsupportedManifestException {
        if (!root.isObject()) {
            throw new UnsupportedManifestException(what + ": manifest is not a JSON object");
        }
        String ct = MediaTypes.base(contentType);
        String mt = root.path("mediaType").asText("");
        if (root.path("schemaVersion").asInt(0) == 1 || SCHEMA1_TYPES.contains(ct) || SCHEMA1_TYPES.contains(mt)
                || root.has("fsLayers")) {
            throw new UnsupportedManifestException(what + ": Docker image manifest schema 1 is deprecated and not supported;"
                    + " push the image again with a current docker or skopeo (schema 2 or OCI)");
        }
        boolean looksIndex = root.path("manifests").isArray();
        boolean looksManifest = root.path("config").isObject() && root.path("layers").isArray();
        Kind byBody = kindOf(mt);
        Kind byHeader = kindOf(ct);
        if (!mt.isEmpty() && byBody == null) {
            throw new UnsupportedManifestException(what + ": media type " + mt + " is not a container image manifest or index");
        }
        if (byBody != null && byHeader != null && byBody != byHeader) {
            throw new UnsupportedManifestException(what + ": registry sent Content-Type " + ct + " but the body says " + mt);
        }
        Kind declared = byBody != null ? byBody : byHeader;
        if (declared == null && !GENERIC_TYPES.contains(ct)) {
            throw new UnsupportedManifestException(what + ": media type " + ct + " is not a container image manifest or index");
        }
        if (declared == null) {
            declared = looksIndex && !looksManifest ? Kind.INDEX : looksManifest && !looksIndex ? Kind.MANIFEST : null;
            if (declared == null) {
                throw new UnsupportedManifestException(what + ": body is neither an image manifest (config and layers) nor an"
                        + " index (manifests)");
            }
        }
        if (declared == Kind.INDEX && !looksIndex) {
            throw new UnsupportedManifestException(what + ": malformed index: no 'manifests' array");
        }
        if (declared == Kind.MANIFEST && !looksManifest) {
            throw new UnsupportedManifestException(what + ": malformed manifest: needs a 'config' object and a 'layers' array");
        }
        int schema = root.path("schemaVersion").asInt(0);
        if (schema != 2) {
            throw new UnsupportedManifestException(what + ": unsupported schemaVersion " + root.path("schemaVersion"));
        }
        return declared;
    }

    private static Kind kindOf(String mediaType) {
        return INDEX_TYPES.contains(mediaType) ? Kind.INDEX : MANIFEST_TYPES.contains(mediaType) ? Kind.MANIFEST : null;
    }

    /**
     * The index entry for {@code platform}: the first whose {@code platform} matches.
     *
     * @throws UnsupportedManifestException naming the platforms the image offers when none matches
     */
    static Descriptor pickPlatform(JsonNode index, Platform platform, String what) throws UnsupportedManifestException {
        List<String> offered = new ArrayList<>();
        JsonNode entries = index.path("manifests");
        for (int i = 0; i < entries.size(); i++) {
            JsonNode e = entries.get(i);
            JsonNode p = e.path("platform");
            String os = p.path("os").asText("");
            String arch = p.path("architecture").asText("");
            String variant = p.path("variant").asText("");
            if (platform.matches(os, arch, variant.isEmpty() ? null : variant)) {
                Descriptor d = descriptor(e, what + ": index entry " + i);
                if (!d.mediaType().isEmpty() && !MANIFEST_TYPES.contains(d.mediaType())) {
                    throw new UnsupportedManifestException(what + ": the " + platform + " entry is " + d.mediaType()
                            + ", not an image manifest (nested indexes are not supported)");
                }
                return d;
            }
            if (!os.isEmpty() && !os.equals("unknown")) { // buildx lists attestations as unknown/unknown
                offered.add(os + "/" + arch + (variant.isEmpty() ? "" : "/" + variant));
            }
        }
        throw new UnsupportedManifestException(what + ": no image for " + platform + " (the image has "
                + (offered.isEmpty() ? "no platform entries" : offered.stream().distinct().collect(Collectors.joining(", "))) + ")");
    }

    /** The config descriptor of an image manifest; refuses artifacts whose config is not an image config. */
    public static Descriptor config(JsonNode manifest, String what) throws UnsupportedManifestException {
        Descriptor d = descriptor(manifest.path("config"), what + ": config");
        if (!CONFIG_TYPES.contains(d.mediaType())) {
            throw new UnsupportedManifestException(what + ": not a container image (config media type " + d.mediaType() + ")");
        }
        return d;
    }

    /** Layer descriptors, bottom layer first. */
    public static List<Descriptor> layers(JsonNode manifest, String what) throws UnsupportedManifestException {
        List<Descriptor> out = new ArrayList<>();
        JsonNode layers = manifest.path("layers");
        for (int i = 0; i < layers.size(); i++) {
            out.add(descriptor(layers.get(i), what + ": layer " + i));
        }
        return out;
    }

    private static Descriptor descriptor(JsonNode n, String what) throws UnsupportedManifestException {
        if (!n.isObject()) {
            throw new UnsupportedManifestException(what + ": descriptor is not an object");
        }
        String digest = n.path("digest").asText("");
        if (!Digests.isSha256(digest)) {
            throw new UnsupportedManifestException(what + ": digest '" + digest + "' is not sha256: and 64 lowercase hex digits");
        }
        JsonNode size = n.path("size");
        if (!size.isIntegralNumber() || !size.canConvertToLong() || size.asLong() < 0) {
            throw new UnsupportedManifestException(what + ": size '" + size + "' is not a byte count");
        }
        return new Descriptor(n.path("mediaType").asText(""), digest, size.asLong());
    }
}
