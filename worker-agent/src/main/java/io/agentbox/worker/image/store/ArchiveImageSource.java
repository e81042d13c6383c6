package io.agentbox.worker.image.store;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.protocol.image.ImageReference;
import io.agentbox.worker.image.Descriptor;
import io.agentbox.worker.image.ImageSource;
import io.agentbox.worker.image.ResolvedImage;
import io.agentbox.worker.image.unpack.Compression;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.LongConsumer;
import java.util.regex.Pattern;

/**
 * An {@link ImageSource} over a local archive:
 * <ul>
 *   <li>an OCI image layout (image-spec {@code image-layout.md}: {@code oci-layout},
 *       {@code index.json}, {@code blobs/sha256/}), as a directory or a tar; nested indexes are
 *       narrowed to this machine's {@code linux/<arch>};</li>
 *   <li>a {@code docker save} archive: {@code manifest.json} listing {@code Config},
 *       {@code RepoTags} and {@code Layers} (uncompressed layer tars). Such an image has no
 *       manifest blob: the digest is that of the OCI manifest this class writes for it (stable for
 *       the same content). Docker 25 and later write both forms in one tar; the OCI layout is then
 *       used and {@code RepoTags} only supply names.</li>
 * </ul>
 * Names come from {@code io.containerd.image.name}, then {@code org.opencontainers.image.ref.name}
 * when it is a full reference (a bare tag such as "latest" names nothing), then RepoTags. Blobs
 * are checked against their digest and size as they are copied out.
 */
final class ArchiveImageSource implements ImageSource, AutoCloseable {
    static final String OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
    static final String OCI_INDEX = "application/vnd.oci.image.index.v1+json";
    static final String DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json";
    static final String DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json";
    static final String OCI_CONFIG = "application/vnd.oci.image.config.v1+json";
    private static final int MAX_JSON = 8 << 20;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern BLOB_PATH = Pattern.compile("(?:\\./)?blobs/sha256/([a-f0-9]{64})");

    /** One image of the archive and the names it carries (normalised; may be empty). */
    record ArchiveImage(ResolvedImage resolved, List<String> names) {}

    private final ArchiveFiles files;
    private final List<ArchiveImage> images = new ArrayList<>();
    /** digest -> path inside the archive. */
    private final Map<String, String> blobs = new HashMap<>();

    private ArchiveImageSource(ArchiveFiles files) {
        this.files = files;
    }

    /**
     * Reads the archive's index. {@code scratchDir} receives a decompressed copy of a compressed
     * tar; the caller deletes it.
     *
     * @throws IOException naming the file and what is malformed
     */
    static ArchiveImageSource open(Path file, Path scratchDir) throws IOException {
        ArchiveFiles files = ArchiveFiles.open(file, scratchDir);
        ArchiveImageSource source = new ArchiveImageSource(files);
        try {
            source.index();
            return source;
        } catch (IOException | RuntimeException e) {
            files.close();
            throw e;
        }
    }

    List<ArchiveImage> images() {
        return List.copyOf(images);
    }

    private void index() throws IOException {
        Map<String, List<String>> repoTags = new HashMap<>();
        JsonNode dockerManifest = files.exists("manifest.json") ? json("manifest.json") : null;
        if (dockerManifest != null) {
            if (!dockerManifest.isArray()) {
                throw malformed("manifest.json is not a JSON array");
            }
            for (JsonNode m : dockerManifest) {
                String config = text(m, "Config", "manifest.json");
                List<String> names = new ArrayList<>();
                for (JsonNode t : m.path("RepoTags")) {
                    names.add(normalise(t.asText(), "RepoTags"));
                }
                repoTags.computeIfAbsent(blobDigestOrPath(config), k -> new ArrayList<>()).addAll(names);
            }
        }
        if (files.exists("oci-layout") && files.exists("index.json")) {
            indexOciLayout(repoTags);
        } else if (dockerManifest != null) {
            indexDockerSave(dockerManifest);
        } else {
            throw malformed("holds neither an OCI image layout (oci-layout, index.json) nor a docker save manifest.json");
        }
    }

    // ------------------------------------------------------------- OCI layout

    private void indexOciLayout(Map<String, List<String>> repoTags) throws IOException {
        JsonNode layout = json("oci-layout");
        if (!layout.path("imageLayoutVersion").isTextual()) {
            throw malformed("oci-layout has no imageLayoutVersion");
        }
        JsonNode index = json("index.json");
        Map<String, Set<String>> namesByManifest = new LinkedHashMap<>();
        Map<String, JsonNode> manifests = new LinkedHashMap<>();
        for (JsonNode d : array(index, "manifests", "index.json")) {
            String digest = digest(d, "index.json");
            String mediaType = d.path("mediaType").asText("");
            JsonNode chosen = d;
            if (mediaType.equals(OCI_INDEX) || mediaType.equals(DOCKER_LIST)) {
                chosen = pickPlatform(blobJson(digest), digest);
            }
            String manifestDigest = digest(chosen, "index " + digest);
            manifests.putIfAbsent(manifestDigest, chosen);
            Set<String> names = namesByManifest.computeIfAbsent(manifestDigest, k -> new LinkedHashSet<>());
            JsonNode ann = d.path("annotations");
            String containerd = ann.path("io.containerd.image.name").asText("");
            String refName = ann.path("org.opencontainers.image.ref.name").asText("");
            if (!containerd.isEmpty()) {
                names.add(normalise(containerd, "io.containerd.image.name"));
            } else if (refName.contains("/") || refName.contains(":")) {
                names.add(normalise(refName, "org.opencontainers.image.ref.name"));
            }
        }
        for (Map.Entry<String, JsonNode> e : manifests.entrySet()) {
            String manifestDigest = e.getKey();
            byte[] manifestBytes = blobBytes(manifestDigest);
            JsonNode manifest = parse(manifestBytes, "manifest " + manifestDigest);
            JsonNode config = manifest.path("config");
            String configDigest = digest(config, "manifest " + manifestDigest + " config");
            byte[] configJson = blobBytes(configDigest);
            List<Descriptor> layers = new ArrayList<>();
            for (JsonNode l : array(manifest, "layers", "manifest " + manifestDigest)) {
                String d = digest(l, "manifest " + manifestDigest + " layer");
                blobs.put(d, "blobs/sha256/" + d.substring(7));
                layers.add(new Descriptor(l.path("mediaType").asText(""), d, size(l, d)));
            }
            Set<String> names = namesByManifest.get(manifestDigest);
            names.addAll(repoTags.getOrDefault(configDigest, List.of()));
            add(manifestDigest, new Descriptor(config.path("mediaType").asText(""), configDigest, configJson.length),
                    configJson, layers, List.copyOf(names));
        }
    }

    private JsonNode pickPlatform(JsonNode index, String digest) throws IOException {
        String arch = goArch();
        List<String> seen = new ArrayList<>();
        for (JsonNode m : array(index, "manifests", "index " + digest)) {
            JsonNode p = m.path("platform");
            String os = p.path("os").asText("");
            String a = p.path("architecture").asText("");
            seen.add(os + "/" + a);
            if (os.equals("linux") && a.equals(arch)) {
                return m;
            }
        }
        throw malformed("index " + digest + " has no manifest for linux/" + arch + " (it has " + seen + ")");
    }

    /** This JVM's architecture in the OCI / Go spelling. */
    static String goArch() {
        String a = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        return switch (a) {
            case "x86_64", "amd64" -> "amd64";
            case "aarch64", "arm64" -> "arm64";
            case "x86", "i386", "i686" -> "386";
            default -> a;
        };
    }

    // ------------------------------------------------------------- docker save

    private void indexDockerSave(JsonNode manifest) throws IOException {
        for (JsonNode m : manifest) {
            String configPath = text(m, "Config", "manifest.json");
            byte[] configJson = files.read(configPath, MAX_JSON);
            String configDigest = Digests.of(configJson);
            blobs.put(configDigest, configPath);
            List<Descriptor> layers = new ArrayList<>();
            for (JsonNode l : array(m, "Layers", "manifest.json")) {
                String path = l.asText();
                String digest = blobDigestOrPath(path);
                if (!Digests.isValid(digest)) {
                    digest = digestOf(path);
                }
                blobs.put(digest, path);
                layers.add(new Descriptor(mediaTypeOf(path), digest, files.size(path)));
            }
            List<String> names = new ArrayList<>();
            for (JsonNode t : m.path("RepoTags")) {
                names.add(normalise(t.asText(), "RepoTags"));
            }
            byte[] synthesised = ociManifest(new Descriptor(OCI_CONFIG, configDigest, configJson.length), layers);
            add(Digests.of(synthesised), new Descriptor(OCI_CONFIG, configDigest, configJson.length), configJson, layers, names);
        }
    }

    /** The OCI manifest for a docker-save image: fixed field order, so the same image gets the same digest. */
    static byte[] ociManifest(Descriptor config, List<Descriptor> layers) throws IOException {
        ObjectNode root = JSON.createObjectNode();
        root.put("schemaVersion", 2);
        root.put("mediaType", OCI_MANIFEST);
        root.set("config", descriptor(config));
        ArrayNode ls = root.putArray("layers");
        for (Descriptor d : layers) {
            ls.add(descriptor(d));
        }
        return JSON.writeValueAsBytes(root);
    }

    private static ObjectNode descriptor(Descriptor d) {
        ObjectNode n = JSON.createObjectNode();
        n.put("mediaType", d.mediaType());
        n.put("digest", d.digest());
        n.put("size", d.size());
        return n;
    }

    private String mediaTypeOf(String path) throws IOException {
        try (InputStream in = new BufferedInputStream(files.open(path))) {
            return switch (Compression.sniff(in)) {
                case GZIP -> "application/vnd.oci.image.layer.v1.tar+gzip";
                case ZSTD -> "application/vnd.oci.image.layer.v1.tar+zstd";
                case NONE -> "application/vnd.oci.image.layer.v1.tar";
            };
        }
    }

    private String digestOf(String path) throws IOException {
        MessageDigest md = Digests.sha256();
        try (InputStream in = files.open(path)) {
            byte[] buf = new byte[128 * 1024];
            int n;
            while ((n = in.read(buf)) > 0) {
                md.update(buf, 0, n);
            }
        }
        return Digests.of(md);
    }

    // ------------------------------------------------------------- ImageSource

    private void add(String manifestDigest, Descriptor config, byte[] configJson, List<Descriptor> layers, List<String> names)
            throws IOException {
        ImageReference ref = ImageReference.parse((names.isEmpty() ? "localhost/unnamed" : names.get(0))
                .replaceFirst("@sha256:[a-f0-9]{64}$", "")).withDigest(manifestDigest);
        images.add(new ArchiveImage(new ResolvedImage(ref, manifestDigest, config, configJson, layers), names));
    }

    @Override
    public ResolvedImage resolve(ImageReference ref) throws IOException {
        List<String> all = new ArrayList<>();
        for (ArchiveImage i : images) {
            if (i.names().contains(ref.toString()) || i.resolved().manifestDigest().equals(ref.digest())) {
                return i.resolved();
            }
            all.addAll(i.names());
        }
        throw new IOException(files.file + " holds no image " + ref + " (it holds " + all + ")");
    }

    @Override
    public void fetchBlob(ImageReference ref, Descriptor blob, Path target, LongConsumer progress) throws IOException {
        String path = blobs.get(blob.digest());
        if (path == null) {
            throw new IOException("blob " + blob.digest() + " is not in " + files.file);
        }
        MessageDigest md = Digests.sha256();
        long n = 0;
        try (InputStream in = files.open(path);
             OutputStream out = Files.newOutputStream(target, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                     StandardOpenOption.WRITE)) {
            byte[] buf = new byte[128 * 1024];
            int r;
            while ((r = in.read(buf)) > 0) {
                n += r;
                if (n > blob.size()) {
                    throw new IOException("blob " + blob.digest() + " in " + files.file + " is longer than its " + blob.size() + " bytes");
                }
                md.update(buf, 0, r);
                out.write(buf, 0, r);
                progress.accept(r);
            }
        } catch (IOException e) {
            Files.deleteIfExists(target);
            throw e;
        }
        String actual = Digests.of(md);
        if (n != blob.size() || !actual.equals(blob.digest())) {
            Files.deleteIfExists(target);
            throw new IOException("blob " + blob.digest() + " in " + files.file + " has " + n + " bytes with digest " + actual
                    + ", the manifest says " + blob.size() + " bytes");
        }
    }

    @Override
    public void close() throws IOException {
        files.close();
    }

    // ------------------------------------------------------------- helpers

    private JsonNode json(String name) throws IOException {
        return parse(files.read(name, MAX_JSON), name);
    }

    private byte[] blobBytes(String digest) throws IOException {
        byte[] data = files.read("blobs/sha256/" + Digests.hex(digest, files.file.toString()), MAX_JSON);
        if (!Digests.of(data).equals(digest)) {
            throw malformed("blob " + digest + " does not match its digest");
        }
        blobs.put(digest, "blobs/sha256/" + digest.substring(7));
        return data;
    }

    private JsonNode blobJson(String digest) throws IOException {
        return parse(blobBytes(digest), "blob " + digest);
    }

    private JsonNode parse(byte[] data, String what) throws IOException {
        try {
            JsonNode n = JSON.readTree(data);
            if (n == null || n.isMissingNode()) {
                throw malformed(what + " is empty");
            }
            return n;
        } catch (JsonProcessingException e) {
            throw malformed(what + " is not valid JSON: " + e.getOriginalMessage());
        }
    }

    private static String blobDigestOrPath(String path) {
        var m = BLOB_PATH.matcher(path);
        return m.matches() ? "sha256:" + m.group(1) : path;
    }

    private String text(JsonNode n, String field, String where) throws IOException {
        JsonNode v = n.path(field);
        if (!v.isTextual() || v.asText().isEmpty()) {
            throw malformed(where + " has no " + field);
        }
        return v.asText();
    }

    private JsonNode array(JsonNode n, String field, String where) throws IOException {
        JsonNode v = n.path(field);
        if (!v.isArray()) {
            throw malformed(where + " has no " + field + " array");
        }
        return v;
    }

    private String digest(JsonNode descriptor, String where) throws IOException {
        String d = descriptor.path("digest").asText("");
        if (!Digests.isValid(d)) {
            throw malformed(where + ": '" + d + "' is not a sha256 digest");
        }
        return d;
    }

    private long size(JsonNode descriptor, String digest) throws IOException {
        JsonNode s = descriptor.path("size");
        if (!s.canConvertToLong() || s.asLong() < 0) {
            throw malformed("descriptor of " + digest + " has no valid size");
        }
        return s.asLong();
    }

    private String normalise(String name, String where) throws IOException {
        try {
            return ImageReference.parse(name).toString();
        } catch (IllegalArgumentException e) {
            throw malformed(where + " '" + name + "': " + e.getMessage());
        }
    }

    private IOException malformed(String what) {
        return new IOException(files.file + ": " + what);
    }
}
