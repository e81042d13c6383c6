package io.agentbox.worker.image.registry;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentbox.protocol.image.ImageReference;
import io.agentbox.worker.image.Descriptor;
import io.agentbox.worker.image.ImageSource;
import io.agentbox.worker.image.ResolvedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.LongConsumer;

/**
 * Pulls images from registries speaking the OCI distribution API ({@code /v2/}): Docker Hub,
 * GHCR, Debian's {@code docker-registry} and the like. Resolves tags and digests to this worker's
 * platform manifest (OCI index and Docker manifest list, OCI and Docker schema 2 manifests;
 * schema 1 is refused), verifies manifest, config and blob digests on the exact bytes received,
 * answers Bearer and Basic challenges, resumes cut downloads and waits out 429/503.
 * Thread-safe; close it to release its connections and threads.
 */
public final class RegistryClient implements ImageSource, AutoCloseable {
    private final RegistryConfig config;
    private final HttpTransport transport;
    private final RegistryHttp http;
    private final BlobFetcher blobs;
    private final ObjectMapper json = new ObjectMapper();

    public RegistryClient(RegistryConfig config) {
        this.config = config;
        this.transport = new HttpTransport(config.timeouts());
        this.http = new RegistryHttp(config, transport, new RegistryAuth(config, transport, json), json);
        this.blobs = new BlobFetcher(http, config);
    }

    public RegistryConfig config() {
        return config;
    }

    /**
     * {@inheritDoc}
     *
     * <p>A reference with a digest is checked against the bytes of what the registry sends for
     * it (index or manifest); the result's {@code manifestDigest} is the digest of the platform
     * manifest's exact bytes.
     */
    @Override
    public ResolvedImage resolve(ImageReference ref) throws IOException {
        String what = "image " + ref;
        Fetched top = manifest(ref, ref.manifestReference(), what);
        if (ref.digest() != null && !top.digest.equals(ref.digest())) {
            throw new DigestMismatchException(what + ": manifest digest mismatch, got " + top.digest);
        }
        Fetched m = top;
        if (top.kind == Manifests.Kind.INDEX) {
            Descriptor entry = Manifests.pickPlatform(top.root, config.platform(), what);
            if (entry.size() > config.limits().maxManifestBytes()) {
                throw new UnsupportedManifestException(what + ": the " + config.platform() + " manifest is " + entry.size()
                        + " bytes, more than the limit of " + config.limits().maxManifestBytes());
            }
            m = manifest(ref, entry.digest(), what + " (" + config.platform() + " manifest " + entry.digest() + ")");
            if (!m.digest.equals(entry.digest()) || m.bytes.length != entry.size()) {
                throw new DigestMismatchException(what + ": " + config.platform() + " manifest " + entry.digest()
                        + ": digest mismatch, got " + m.digest + " (" + m.bytes.length + " bytes, index says " + entry.size() + ")");
            }
            if (m.kind != Manifests.Kind.MANIFEST) {
                throw new UnsupportedManifestException(what + ": the " + config.platform()
                        + " entry is another index (nested indexes are not supported)");
            }
        }
        Descriptor configDesc = Manifests.config(m.root, what);
        List<Descriptor> layers = Manifests.layers(m.root, what);
        byte[] configJson = configBlob(ref, configDesc, what);
        return new ResolvedImage(ref.withDigest(m.digest), m.digest, configDesc, configJson, layers);
    }

    @Override
    public void fetchBlob(ImageReference ref, Descriptor blob, Path target, LongConsumer progress) throws IOException {
        blobs.fetch(ref, blob, target, progress);
    }

    @Override
    public void close() {
        transport.close();
    }

    private record Fetched(byte[] bytes, String digest, JsonNode root, Manifests.Kind kind) {}

    private Fetched manifest(ImageReference ref, String reference, String what) throws IOException {
        long max = config.limits().maxManifestBytes();
        byte[] bytes;
        String contentType;
        String headerDigest;
        try (HttpTransport.Reply r = http.get(ref, what, "manifests/" + reference, Map.of("Accept", MediaTypes.MANIFEST_ACCEPT),
                false)) {
            contentType = r.header("Content-Type");
            headerDigest = r.header("Docker-Content-Digest");
            try {
                bytes = r.readAll(max);
            } catch (HttpTransport.BodyTooLarge e) {
                throw new UnsupportedManifestException(what + ": manifest is larger than the limit of " + max + " bytes");
            }
        }
        String digest = Digests.of(bytes);
        if (Digests.isSha256(headerDigest) && !headerDigest.equals(digest)) {
            throw new DigestMismatchException(what + ": manifest bytes hash to " + digest + " but the registry says "
                    + headerDigest);
        }
        JsonNode root;
        try {
            root = json.readTree(bytes);
        } catch (JsonProcessingException e) {
            throw new UnsupportedManifestException(what + ": manifest is not valid JSON: " + e.getOriginalMessage());
        }
        if (root == null) {
            throw new UnsupportedManifestException(what + ": manifest is empty");
        }
        return new Fetched(bytes, digest, root, Manifests.classify(contentType, root, what));
    }

    private byte[] configBlob(ImageReference ref, Descriptor d, String what) throws IOException {
        long max = config.limits().maxConfigBytes();
        if (d.size() > max) {
            throw new UnsupportedManifestException(what + ": config blob is " + d.size() + " bytes, more than the limit of " + max);
        }
        String blobWhat = what + ": config blob " + d.digest();
        byte[] bytes;
        try (HttpTransport.Reply r = http.get(ref, blobWhat, "blobs/" + d.digest(), Map.of(), false)) {
            bytes = r.readAll(d.size());
        } catch (HttpTransport.BodyTooLarge e) {
            throw new DigestMismatchException(blobWhat + ": registry sends more than the " + d.size() + " bytes the manifest says");
        }
        String got = Digests.of(bytes);
        if (bytes.length != d.size() || !got.equals(d.digest())) {
            throw new DigestMismatchException(blobWhat + ": digest mismatch, got " + got + " (" + bytes.length + " of "
                    + d.size() + " bytes)");
        }
        return bytes;
    }
}
