package io.agentbox.worker.image.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.worker.image.Descriptor;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * Pushes test images to a registry without auth (distribution-spec push: {@code POST
 * /v2/<repo>/blobs/uploads/} then a monolithic {@code PUT <location>?digest=}, and {@code PUT
 * /v2/<repo>/manifests/<reference>} with the manifest's Content-Type). Layers and configs are
 * whatever bytes the test gives; the layer media type follows the bytes' magic (gzip, zstd, else
 * plain tar).
 */
public final class RegistryPush {
    public static final String OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
    public static final String OCI_INDEX = "application/vnd.oci.image.index.v1+json";
    public static final String OCI_CONFIG = "application/vnd.oci.image.config.v1+json";
    public static final String DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json";
    public static final String DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json";
    public static final String DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json";

    /** Manifest flavours: OCI, OCI as umoci writes it (no mediaType fields anywhere), Docker schema 2. */
    public enum ManifestKind { OCI, OCI_WITHOUT_MEDIA_TYPE, DOCKER_V2S2 }

    /** Index flavours: OCI index, OCI index without mediaType fields, Docker manifest list. */
    public enum IndexKind { OCI, OCI_WITHOUT_MEDIA_TYPE, DOCKER_LIST }

    /**
     * One pushed manifest.
     *
     * @param digest digest of {@code manifest}'s exact bytes
     * @param contentType what it was pushed as
     */
    public record Pushed(String repo, String reference, String digest, byte[] manifest, String contentType, Descriptor config,
                         List<Descriptor> layers) {}

    /** One platform's image for {@link #pushIndex}. */
    public record PlatformImage(String os, String architecture, String variant, List<byte[]> layers, byte[] config,
                                ManifestKind kind) {}

    /** A pushed index and the manifests it lists, in order. */
    public record PushedIndex(String repo, String tag, String digest, byte[] index, List<Pushed> manifests) {}

    private static final ObjectMapper JSON = new ObjectMapper();

    private final URI base;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** @param base registry root such as {@code http://127.0.0.1:5000} */
    public RegistryPush(URI base) {
        this.base = base;
    }

    public RegistryPush(LocalRegistry registry) {
        this(registry.baseUri());
    }

    /** Uploads {@code content} as a blob of {@code repo} (a no-op for the registry if it exists). */
    public Descriptor pushBlob(String repo, byte[] content, String mediaType) throws IOException {
        String digest = sha256(content);
        HttpResponse<String> start = send(HttpRequest.newBuilder(base.resolve("/v2/" + repo + "/blobs/uploads/"))
                .POST(HttpRequest.BodyPublishers.noBody()).build());
        expect(start, 202, "start upload to " + repo);
        URI location = base.resolve(start.headers().firstValue("Location")
                .orElseThrow(() -> new IOException("upload to " + repo + ": no Location")));
        String sep = location.getRawQuery() == null ? "?" : "&";
        HttpResponse<String> put = send(HttpRequest.newBuilder(URI.create(location + sep + "digest=" + digest))
                .header("Content-Type", "application/octet-stream")
                .PUT(HttpRequest.BodyPublishers.ofByteArray(content)).build());
        expect(put, 201, "upload blob " + digest + " to " + repo);
        return new Descriptor(mediaType, digest, content.length);
    }

    /** PUTs a manifest or index; returns the digest of {@code body}. */
    public String pushManifest(String repo, String reference, byte[] body, String contentType) throws IOException {
        HttpResponse<String> r = send(HttpRequest.newBuilder(base.resolve("/v2/" + repo + "/manifests/" + reference))
                .header("Content-Type", contentType).PUT(HttpRequest.BodyPublishers.ofByteArray(body)).build());
        expect(r, 201, "push manifest " + repo + ":" + reference);
        String digest = sha256(body);
        String said = r.headers().firstValue("Docker-Content-Digest").orElse(digest);
        if (!said.equals(digest)) {
            throw new IOException("registry computed " + said + " for a manifest whose bytes hash to " + digest);
        }
        return digest;
    }

    /** Pushes layers, config and a manifest of {@code kind} under {@code tag} (or a digest when tag is null). */
    public Pushed push(String repo, String tag, List<byte[]> layers, byte[] config, ManifestKind kind) throws IOException {
        boolean docker = kind == ManifestKind.DOCKER_V2S2;
        boolean withTypes = kind != ManifestKind.OCI_WITHOUT_MEDIA_TYPE;
        Descriptor cfg = pushBlob(repo, config, docker ? DOCKER_CONFIG : OCI_CONFIG);
        List<Descriptor> ls = new ArrayList<>();
        for (byte[] layer : layers) {
            ls.add(pushBlob(repo, layer, layerMediaType(layer, docker)));
        }
        ObjectNode m = JSON.createObjectNode();
        m.put("schemaVersion", 2);
        if (withTypes) {
            m.put("mediaType", docker ? DOCKER_MANIFEST : OCI_MANIFEST);
        }
        m.set("config", descriptorJson(cfg, withTypes));
        ArrayNode arr = m.putArray("layers");
        ls.forEach(d -> arr.add(descriptorJson(d, withTypes)));
        byte[] body = JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(m); // pretty: digests must cover exact bytes
        String type = docker ? DOCKER_MANIFEST : OCI_MANIFEST;
        String digest = pushManifest(repo, tag != null ? tag : sha256(body), body, type);
        if (!withTypes) { // what the manifest says is what a puller sees
            cfg = new Descriptor("", cfg.digest(), cfg.size());
            ls = ls.stream().map(d -> new Descriptor("", d.digest(), d.size())).toList();
        }
        return new Pushed(repo, tag != null ? tag : digest, digest, body, type, cfg, ls);
    }

    /** Pushes each platform's image by digest, then an index of {@code kind} listing them under {@code tag}. */
    public PushedIndex pushIndex(String repo, String tag, IndexKind kind, List<PlatformImage> images) throws IOException {
        boolean withTypes = kind != IndexKind.OCI_WITHOUT_MEDIA_TYPE;
        ObjectNode idx = JSON.createObjectNode();
        idx.put("schemaVersion", 2);
        if (withTypes) {
            idx.put("mediaType", kind == IndexKind.DOCKER_LIST ? DOCKER_LIST : OCI_INDEX);
        }
        ArrayNode entries = idx.putArray("manifests");
        List<Pushed> pushed = new ArrayList<>();
        for (PlatformImage img : images) {
            Pushed p = push(repo, null, img.layers(), img.config(), img.kind());
            pushed.add(p);
            ObjectNode e = descriptorJson(new Descriptor(p.contentType(), p.digest(), p.manifest().length), withTypes);
            ObjectNode platform = e.putObject("platform");
            platform.put("architecture", img.architecture());
            platform.put("os", img.os());
            if (img.variant() != null) {
                platform.put("variant", img.variant());
            }
            entries.add(e);
        }
        byte[] body = JSON.writeValueAsBytes(idx);
        String type = kind == IndexKind.DOCKER_LIST ? DOCKER_LIST : OCI_INDEX;
        String digest = pushManifest(repo, tag, body, type);
        return new PushedIndex(repo, tag, digest, body, pushed);
    }

    /** A small image config ({@code os}, {@code architecture}, {@code config.Env}) as JSON bytes. */
    public static byte[] config(String os, String architecture, String... env) {
        ObjectNode c = JSON.createObjectNode();
        c.put("architecture", architecture);
        c.put("os", os);
        ArrayNode e = c.putObject("config").putArray("Env");
        for (String v : env) {
            e.add(v);
        }
        ObjectNode rootfs = c.putObject("rootfs");
        rootfs.put("type", "layers");
        rootfs.putArray("diff_ids");
        try {
            return JSON.writeValueAsBytes(c);
        } catch (IOException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /** Layer media type from the first bytes: gzip {@code 1f 8b}, zstd {@code 28 b5 2f fd}, else tar. */
    public static String layerMediaType(byte[] layer, boolean docker) {
        boolean gzip = layer.length >= 2 && (layer[0] & 0xff) == 0x1f && (layer[1] & 0xff) == 0x8b;
        boolean zstd = layer.length >= 4 && (layer[0] & 0xff) == 0x28 && (layer[1] & 0xff) == 0xb5
                && (layer[2] & 0xff) == 0x2f && (layer[3] & 0xff) == 0xfd;
        if (gzip) {
            return docker ? "application/vnd.docker.image.rootfs.diff.tar.gzip" : "application/vnd.oci.image.layer.v1.tar+gzip";
        }
        if (zstd) {
            return "application/vnd.oci.image.layer.v1.tar+zstd";
        }
        return docker ? "application/vnd.docker.image.rootfs.diff.tar" : "application/vnd.oci.image.layer.v1.tar";
    }

    public static String sha256(byte[] bytes) {
        try {
            return "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static ObjectNode descriptorJson(Descriptor d, boolean withType) {
        ObjectNode n = JSON.createObjectNode();
        if (withType) {
            n.put("mediaType", d.mediaType());
        }
        n.put("digest", d.digest());
        n.put("size", d.size());
        return n;
    }

    private HttpResponse<String> send(HttpRequest request) throws IOException {
        try {
            return http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: " + request.uri(), e);
        }
    }

    private static void expect(HttpResponse<String> r, int status, String what) throws IOException {
        if (r.statusCode() != status) {
            throw new IOException(what + ": registry answered " + r.statusCode() + " " + r.body());
        }
    }
}
