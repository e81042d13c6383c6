package io.agentbox.worker.image;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.protocol.image.ImageReference;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;

/**
 * Test images built offline: blobs, config and OCI manifest in memory, plus writers for an OCI
 * image layout (directory or tar) and a {@code docker save} tar, and an in-memory
 * {@link ImageSource}. Other tests push these to a real registry.
 */
public final class TestImages {
    public static final String LAYER_TAR = "application/vnd.oci.image.layer.v1.tar";
    public static final String LAYER_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip";
    public static final String LAYER_ZSTD = "application/vnd.oci.image.layer.v1.tar+zstd";
    public static final String OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
    public static final String OCI_CONFIG = "application/vnd.oci.image.config.v1+json";
    public static final String OCI_INDEX = "application/vnd.oci.image.index.v1+json";
    private static final ObjectMapper JSON = new ObjectMapper();

    private TestImages() {}

    public enum Compress { NONE, GZIP, ZSTD }

    /**
     * One layer.
     *
     * @param tar the uncompressed tar
     * @param blob the blob as a registry serves it
     */
    public record Layer(byte[] tar, byte[] blob, String mediaType, String digest, String diffId) {
        public Descriptor descriptor() {
            return new Descriptor(mediaType, digest, blob.length);
        }
    }

    /**
     * One image.
     *
     * @param name normalised reference ({@code docker.io/library/x:tag}, {@code 127.0.0.1:5000/x:1})
     */
    public record Image(String name, List<Layer> layers, byte[] config, byte[] manifest) {
        public String configDigest() {
            return LayerTar.sha256(config);
        }

        public String manifestDigest() {
            return LayerTar.sha256(manifest);
        }

        public Descriptor configDescriptor() {
            return new Descriptor(OCI_CONFIG, configDigest(), config.length);
        }

        public ResolvedImage resolved() {
            return new ResolvedImage(ImageReference.parse(name).withDigest(manifestDigest()), manifestDigest(), configDescriptor(),
                    config, layers.stream().map(Layer::descriptor).toList());
        }

        /** The same content under another name. */
        public Image named(String other) {
            return new Image(ImageReference.parse(other).toString(), layers, config, manifest);
        }

        public long size() {
            return layers.stream().mapToLong(l -> l.blob().length).sum();
        }
    }

    public static Layer layer(byte[] tar, Compress c) {
        byte[] blob = switch (c) {
            case NONE -> tar;
            case GZIP -> LayerTar.gzip(tar);
            case ZSTD -> LayerTar.zstd(tar);
        };
        String mediaType = switch (c) {
            case NONE -> LAYER_TAR;
            case GZIP -> LAYER_GZIP;
            case ZSTD -> LAYER_ZSTD;
        };
        return new Layer(tar, blob, mediaType, LayerTar.sha256(blob), LayerTar.sha256(tar));
    }

    /** Builds an image; {@code diffIds} overrides the config's rootfs.diff_ids when non-null. */
    public static Image image(String name, List<Layer> layers, Consumer<ObjectNode> config, List<String> diffIds) {
        ObjectNode cfg = JSON.createObjectNode();
        cfg.put("created", "2024-05-01T12:00:00Z");
        cfg.put("architecture", arch());
        cfg.put("os", "linux");
        ObjectNode c = cfg.putObject("config");
        c.putArray("Env").add("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        c.putArray("Cmd").add("/bin/sh");
        if (config != null) {
            config.accept(c);
        }
        ObjectNode rootfs = cfg.putObject("rootfs");
        rootfs.put("type", "layers");
        ArrayNode ids = rootfs.putArray("diff_ids");
        (diffIds != null ? diffIds : layers.stream().map(Layer::diffId).toList()).forEach(ids::add);
        byte[] configBytes = bytes(cfg);
        ObjectNode m = JSON.createObjectNode();
        m.put("schemaVersion", 2);
        m.put("mediaType", OCI_MANIFEST);
        m.set("config", descriptor(OCI_CONFIG, LayerTar.sha256(configBytes), configBytes.length));
        ArrayNode ls = m.putArray("layers");
        for (Layer l : layers) {
            ls.add(descriptor(l.mediaType(), l.digest(), l.blob().length));
        }
        return new Image(ImageReference.parse(name).toString(), List.copyOf(layers), configBytes, bytes(m));
    }

    public static Image image(String name, Layer... layers) {
        return image(name, List.of(layers), null, null);
    }

    // ------------------------------------------------------------------ the images

    /** A root file system of Debian's static busybox (/bin/busybox and its applet symlinks), gzip. */
    public static Image busybox(String name) {
        return image(name, List.of(layer(busyboxTar(), Compress.GZIP)),
                c -> c.put("WorkingDir", "/").putArray("Entrypoint"), null);
    }

    public static byte[] busyboxTar() {
        Path busybox = Path.of("/bin/busybox");
        if (!Files.isExecutable(busybox)) {
            throw new IllegalStateException("/bin/busybox is missing: install the Debian package busybox-static");
        }
        String list = run(busybox.toString(), "--list-full");
        byte[] binary;
        try {
            binary = Files.readAllBytes(busybox);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        LayerTar t = new LayerTar();
        for (String d : List.of("bin", "sbin", "usr", "usr/bin", "usr/sbin", "etc", "home", "dev", "proc", "sys", "run")) {
            t.dir(d);
        }
        t.dir("tmp", 01777, 0, 0).dir("root", 0700, 0, 0);
        t.file("bin/busybox", binary, 0755, 0, 0, Map.of());
        t.file("etc/passwd", "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n", 0644);
        t.file("etc/group", "root:x:0:\nnogroup:x:65534:\n", 0644);
        for (String applet : list.split("\n")) {
            String p = applet.trim();
            if (!p.isEmpty() && !p.equals("bin/busybox") && !p.equals("/bin/busybox")) {
                t.symlink(p.startsWith("/") ? p.substring(1) : p, "/bin/busybox");
            }
        }
        return t.tar();
    }

    /**
     * Three layers (gzip, zstd, plain): layer 2 whites out {@code /etc/removed}, makes {@code /dd}
     * opaque (only {@code c} left), hardlinks {@code x/h2} to {@code x/h1} and {@code hl/two} to
     * layer 1's {@code hl/one}; layer 3 whites out {@code /gone}. {@code /bin/suid} is 04755.
     */
    public static Image multiLayer(String name) {
        Layer l1 = layer(new LayerTar()
                .dir("etc").file("etc/keep", "keep").file("etc/removed", "removed")
                .dir("dd").file("dd/a", "a").file("dd/b", "b")
                .dir("hl").file("hl/one", "shared")
                .dir("bin").file("bin/suid", "#!/bin/sh\n", 04755)
                .file("gone", "bye").tar(), Compress.GZIP);
        Layer l2 = layer(new LayerTar()
                .dir("etc").whiteout("etc/removed")
                .dir("dd").opaque("dd").file("dd/c", "c")
                .dir("x").file("x/h1", "linked").hardlink("x/h2", "x/h1")
                .hardlink("hl/two", "hl/one").tar(), Compress.ZSTD);
        Layer l3 = layer(new LayerTar().whiteout("gone").file("top", "top").tar(), Compress.NONE);
        return image(name, l1, l2, l3);
    }

    /** Files owned by uid/gid 999 (host 1_000_999 once stored). */
    public static Image uid999(String name) {
        return image(name, layer(new LayerTar().dir("home").dir("home/app", 0750, 999, 999)
                .file("home/app/data", "mine", 0600, 999, 999).tar(), Compress.GZIP));
    }

    /** A single zstd layer. */
    public static Image zstd(String name) {
        return image(name, layer(new LayerTar().dir("z").file("z/zstd", "zstd layer").tar(), Compress.ZSTD));
    }

    /** Hostile layers, by what they try. */
    public enum Hostile {
        DOT_DOT("../x"), ABSOLUTE("/etc/x"), SYMLINK_WRITE("link/pwned"), HARDLINK_PASSWD("passwd"), NESTED_DOT_DOT("a/../../x");

        /** The entry the store must name in its error. */
        public final String entry;

        Hostile(String entry) {
            this.entry = entry;
        }
    }

    /** A one-layer image doing {@code kind}; {@code canary} is the outside directory the symlink aims at. */
    public static Image hostile(String name, Hostile kind, Path canary) {
        byte[] data = "pwned".getBytes(StandardCharsets.UTF_8);
        LayerTar t = new LayerTar().file("innocent", "fine");
        switch (kind) {
            case DOT_DOT -> t.raw("../x", TarConstants.LF_NORMAL, null, data);
            case ABSOLUTE -> t.raw("/etc/x", TarConstants.LF_NORMAL, null, data);
            case SYMLINK_WRITE -> t.symlink("link", canary.toString()).raw("link/pwned", TarConstants.LF_NORMAL, null, data);
            case HARDLINK_PASSWD -> t.hardlink("passwd", "/etc/passwd");
            case NESTED_DOT_DOT -> t.raw("a/../../x", TarConstants.LF_NORMAL, null, data);
            default -> throw new IllegalArgumentException(kind.toString());
        }
        return image(name, layer(t.tar(), Compress.GZIP));
    }

    // ------------------------------------------------------------------ sources and archives

    /** An in-memory registry of {@code images}. */
    public static MemoryImageSource source(Image... images) {
        return new MemoryImageSource(List.of(images));
    }

    /**
     * An OCI image layout in {@code dir}: {@code oci-layout}, {@code index.json} (one entry per
     * image, annotated {@code org.opencontainers.image.ref.name} = its full name unless
     * {@code named} is false), {@code blobs/sha256/*}.
     */
    public static void writeOciLayout(Path dir, boolean named, Image... images) throws IOException {
        for (Map.Entry<String, byte[]> e : ociLayoutFiles(named, images).entrySet()) {
            Path p = dir.resolve(e.getKey());
            Files.createDirectories(p.getParent());
            Files.write(p, e.getValue());
        }
    }

    /** The same layout as one tar file. */
    public static void writeOciLayoutTar(Path file, boolean named, Image... images) throws IOException {
        writeTar(file, ociLayoutFiles(named, images));
    }

    /**
     * A legacy {@code docker save} tar: {@code manifest.json} with Config {@code <hex>.json},
     * RepoTags and Layers {@code <n>/layer.tar} (uncompressed), plus Docker's {@code repositories}.
     */
    public static void writeDockerSave(Path file, Image... images) throws IOException {
        Map<String, byte[]> files = new java.util.LinkedHashMap<>();
        ArrayNode manifest = JSON.createArrayNode();
        for (Image image : images) {
            ObjectNode m = manifest.addObject();
            String configName = image.configDigest().substring(7) + ".json";
            files.put(configName, image.config());
            m.put("Config", configName);
            ImageReference ref = ImageReference.parse(image.name());
            String shortName = ref.registry().equals(ImageReference.DOCKER_HUB)
                    ? ref.repository().replaceFirst("^library/", "") : ref.registry() + "/" + ref.repository();
            m.putArray("RepoTags").add(shortName + ":" + ref.tag());
            ArrayNode layers = m.putArray("Layers");
            for (Layer l : image.layers()) {
                String path = l.diffId().substring(7, 71) + "/layer.tar";
                files.put(path, l.tar());
                layers.add(path);
            }
        }
        files.put("manifest.json", bytes(manifest));
        writeTar(file, files);
    }

    private static Map<String, byte[]> ociLayoutFiles(boolean named, Image... images) {
        Map<String, byte[]> files = new java.util.LinkedHashMap<>();
        files.put("oci-layout", "{\"imageLayoutVersion\":\"1.0.0\"}".getBytes(StandardCharsets.UTF_8));
        ObjectNode index = JSON.createObjectNode();
        index.put("schemaVersion", 2);
        index.put("mediaType", OCI_INDEX);
        ArrayNode manifests = index.putArray("manifests");
        for (Image image : images) {
            ObjectNode d = descriptor(OCI_MANIFEST, image.manifestDigest(), image.manifest().length);
            if (named) {
                d.putObject("annotations").put("org.opencontainers.image.ref.name", image.name());
            }
            manifests.add(d);
            files.put(blob(image.manifestDigest()), image.manifest());
            files.put(blob(image.configDigest()), image.config());
            for (Layer l : image.layers()) {
                files.put(blob(l.digest()), l.blob());
            }
        }
        files.put("index.json", bytes(index));
        return files;
    }

    private static String blob(String digest) {
        return "blobs/sha256/" + digest.substring(7);
    }

    private static void writeTar(Path file, Map<String, byte[]> files) throws IOException {
        try (OutputStream out = Files.newOutputStream(file); TarArchiveOutputStream tar = new TarArchiveOutputStream(out)) {
            tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
            java.util.Set<String> dirs = new java.util.HashSet<>();
            for (Map.Entry<String, byte[]> e : files.entrySet()) {
                String[] parts = e.getKey().split("/");
                String prefix = "";
                for (int i = 0; i < parts.length - 1; i++) {
                    prefix += parts[i] + "/";
                    if (dirs.add(prefix)) {
                        TarArchiveEntry d = new TarArchiveEntry(prefix, TarConstants.LF_DIR);
                        tar.putArchiveEntry(d);
                        tar.closeArchiveEntry();
                    }
                }
                TarArchiveEntry f = new TarArchiveEntry(e.getKey());
                f.setSize(e.getValue().length);
                tar.putArchiveEntry(f);
                tar.write(e.getValue());
                tar.closeArchiveEntry();
            }
        }
    }

    private static ObjectNode descriptor(String mediaType, String digest, long size) {
        ObjectNode d = JSON.createObjectNode();
        d.put("mediaType", mediaType);
        d.put("digest", digest);
        d.put("size", size);
        return d;
    }

    private static byte[] bytes(Object node) {
        try {
            return JSON.writeValueAsBytes(node);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String arch() {
        String a = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
        return a.equals("x86_64") || a.equals("amd64") ? "amd64" : a.equals("aarch64") ? "arm64" : a;
    }

    private static String run(String... cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(Arrays.toString(cmd) + " failed: " + out);
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Blob lookup shared by the in-memory source. */
    public static Map<String, byte[]> blobs(List<Image> images) {
        Map<String, byte[]> out = new HashMap<>();
        for (Image i : images) {
            out.put(i.configDigest(), i.config());
            out.put(i.manifestDigest(), i.manifest());
            for (Layer l : i.layers()) {
                out.put(l.digest(), l.blob());
            }
        }
        return out;
    }

    static List<String> names(List<Image> images) {
        List<String> out = new ArrayList<>();
        images.forEach(i -> out.add(i.name()));
        return out;
    }
}
