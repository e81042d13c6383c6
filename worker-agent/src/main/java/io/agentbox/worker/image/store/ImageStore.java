package io.agentbox.worker.image.store;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.protocol.image.ImageReference;
import io.agentbox.worker.image.BuiltImageLabels;
import io.agentbox.worker.image.Descriptor;
import io.agentbox.worker.image.ImageConfig;
import io.agentbox.worker.image.ImageSource;
import io.agentbox.worker.image.ResolvedImage;
import io.agentbox.worker.image.store.StoreRecords.BlobRef;
import io.agentbox.worker.image.store.StoreRecords.ImageRecord;
import io.agentbox.worker.image.store.StoreRecords.LayerRecord;
import io.agentbox.worker.image.store.StoreRecords.LayerRef;
import io.agentbox.worker.image.unpack.LayerUnpacker;
import io.agentbox.worker.image.unpack.LowerLayers;
import io.agentbox.worker.image.unpack.Trees;
import io.agentbox.worker.image.unpack.UnpackResult;
import io.agentbox.worker.image.unpack.WhiteoutForm;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotLinkException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker's images, content-addressed under {@code <dataDir>/images/}:
 *
 * <pre>
 *   blobs/sha256/&lt;hex&gt;        blobs as fetched (compressed layers, configs), kept for export
 *   layers/&lt;diff_id hex&gt;/root   one unpacked tree per distinct layer (overlayfs form)
 *   layers/&lt;diff_id hex&gt;/layer.json
 *   l/&lt;id&gt;                   short symlink to a layer's root, so overlay lowerdir strings stay short
 *   images/&lt;manifest hex&gt;.json  an image: config, layer digests, sizes, diff_ids
 *   refs.json                 normalised reference -&gt; manifest digest
 *   snapshots.json            snapshot id -&gt; manifest digest of its image (recordSnapshot; recordExport gives it an OCI form)
 *   tmp/&lt;pid&gt;-&lt;start&gt;-&lt;n&gt;     work in progress; removed at open when its process is gone
 *   lock                      writers' lock (this JVM and other processes)
 * </pre>
 *
 * <p>Disk is the truth: every read looks at the files, so an image imported by another process
 * is seen at once. Every new file or directory is made in {@code tmp/} and renamed into place;
 * a crash leaves only {@code tmp/} entries. Layers are unpacked once per store: concurrent pulls
 * in this JVM wait for the one unpacking a diff_id; another process unpacking the same layer
 * loses the final rename and discards its copy. Downloads and unpacking run without the lock;
 * recording an image and GC hold it, and recording checks that GC left every piece in place.
 * An image made on this worker (a build, a snapshot) is made under a {@link Lease}, which keeps
 * GC off its pieces until it is recorded.
 *
 * <p>Thread-safe. Needs root to unpack (owners are set to the sandboxes' host ids).
 */
public final class ImageStore {
    private static final Logger LOG = LoggerFactory.getLogger(ImageStore.class);
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    /** Compact JSON for blobs (configs, manifests): their bytes are digested, so one mapper, no indent. */
    private static final ObjectMapper COMPACT = new ObjectMapper();
    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;
    /** Bytes of progress between listener calls while a blob downloads. */
    private static final long PROGRESS_STEP = 1 << 20;
    private static final int RECORD_ATTEMPTS = 3;
    private static final int SHORT_ID_LENGTH = 8;

    private final Path root;
    private final LayerUnpacker unpacker;
    private final StoreLock lock;
    private final String tmpPrefix;
    private final AtomicLong tmpCounter = new AtomicLong();
    private final ConcurrentHashMap<String, CompletableFuture<Void>> unpacking = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, CompletableFuture<Void>> fetching = new ConcurrentHashMap<>();
    private final AtomicLong layersUnpacked = new AtomicLong();
    /** Layer directories live sandboxes run on: GC never removes those (see {@link #layersInUse}). */
    private volatile Supplier<Collection<Path>> layersInUse = List::of;
    /** Blobs and layers of images being made (a build's steps, a snapshot's layer): GC leaves them. */
    private final Leases leases;

    private ImageStore(Path root, LayerUnpacker unpacker) {
        this.root = root;
        this.unpacker = unpacker;
        this.lock = new StoreLock(root.resolve("lock"));
        this.leases = new Leases(lock);
        ProcessHandle self = ProcessHandle.current();
        this.tmpPrefix = self.pid() + "-" + startMillis(self) + "-";
    }

    /** The store directory of a worker whose data directory is {@code workerDataDir}. */
    public static Path storeDir(Path workerDataDir) {
        return workerDataDir.resolve("images");
    }

    /**
     * Opens (creating) the store of the worker data directory {@code workerDataDir}, with default
     * unpack limits and this kernel's whiteout form. Removes temp entries of processes that are gone
     * and short links whose layer is missing.
     */
    public static ImageStore open(Path workerDataDir) throws IOException {
        return open(workerDataDir, LayerUnpacker.forThisKernel());
    }

    public static ImageStore open(Path workerDataDir, LayerUnpacker unpacker) throws IOException {
        Path root = storeDir(workerDataDir).toAbsolutePath().normalize();
        for (String d : List.of("blobs/sha256", "layers", "l", "images", "tmp")) {
            Files.createDirectories(root.resolve(d));
        }
        // sandboxes' host uids traverse this path to reach the layer trees (0711 is enough)
        for (String d : List.of("", "layers", "l")) {
            Files.setPosixFilePermissions(root.resolve(d), PosixFilePermissions.fromString("rwx--x--x"));
        }
        ImageStore store = new ImageStore(root, unpacker);
        store.cleanUp();
        return store;
    }

    public Path root() {
        return root;
    }

    /** Layers this store object unpacked since it was opened (for metrics and tests). */
    public long layersUnpacked() {
        return layersUnpacked.get();
    }

    // ---------------------------------------------------------------- pull and import

    /**
     * Resolves {@code ref} through {@code source}, fetches the blobs the store lacks, unpacks each
     * missing layer once, checks every diff_id against the config's {@code rootfs.diff_ids}, and
     * records the image under {@code ref} (normalised).
     *
     * @throws IOException naming the image and the cause; nothing half-made stays behind
     */
    public StoredImage pull(ImageReference ref, ImageSource source, PullListener listener) throws IOException {
        ResolvedImage resolved = source.resolve(ref);
        return store(resolved, source, List.of(ref.toString()), listener);
    }

    /**
     * Loads every image of a {@code docker save} archive or an OCI image layout (directory or tar,
     * optionally gzip/zstd-compressed) and records it under its names ({@code RepoTags},
     * {@code io.containerd.image.name} / {@code org.opencontainers.image.ref.name} annotations).
     *
     * @param tag when non-null, a further name; the archive must then hold exactly one image
     *     (this is how a nameless image gets a name)
     * @return the references stored, normalised
     * @throws IOException naming the file and the cause (malformed archive, an image without a name
     *     and no {@code tag}, a digest mismatch, a bad layer)
     */
    public List<String> importArchive(Path file, String tag, PullListener listener) throws IOException {
        Path scratch = newTemp();
        try (ArchiveImageSource source = ArchiveImageSource.open(file, scratch)) {
            List<ArchiveImageSource.ArchiveImage> images = source.images();
            if (images.isEmpty()) {
                throw new IOException(file + " holds no image");
            }
            if (tag != null && images.size() != 1) {
                throw new IOException("--tag needs an archive with exactly one image; " + file + " holds " + images.size());
            }
            String extra = null;
            if (tag != null) {
                try {
                    extra = ImageReference.parse(tag).toString();
                } catch (IllegalArgumentException e) {
                    throw new IOException("--tag: " + e.getMessage(), e);
                }
            }
            for (ArchiveImageSource.ArchiveImage image : images) {
                if (image.names().isEmpty() && extra == null) {
                    throw new IOException("image " + image.resolved().manifestDigest() + " in " + file
                            + " has no name (no RepoTags or ref.name annotation); give one with --tag");
                }
            }
            List<String> stored = new ArrayList<>();
            for (ArchiveImageSource.ArchiveImage image : images) {
                Set<String> names = new LinkedHashSet<>(image.names());
                if (extra != null) {
                    names.add(extra);
                }
                store(image.resolved(), source, List.copyOf(names), listener);
                stored.addAll(names);
            }
            return stored;
        } finally {
            deleteQuietly(scratch);
        }
    }

    /** {@link #importArchive(Path, String, PullListener)} without a tag. */
    public List<String> importArchive(Path file, PullListener listener) throws IOException {
        return importArchive(file, null, listener);
    }

    private StoredImage store(ResolvedImage image, ImageSource source, List<String> references, PullListener listener)
            throws IOException {
        String name = image.reference().toString();
        String manifestHex = Digests.hex(image.manifestDigest(), "image " + name + ": manifest digest");
        Digests.hex(image.config().digest(), "image " + name + ": config digest");
        if (!Digests.of(image.configJson()).equals(image.config().digest())) {
            throw new IOException("image " + name + ": config blob does not match its digest " + image.config().digest());
        }
        ConfigBlob config = ConfigBlob.parse(image.configJson(), name);
        List<Descriptor> layers = image.layers();
        if (config.diffIds().size() != layers.size()) {
            throw new IOException("image " + name + ": the manifest lists " + layers.size() + " layers but the config "
                    + config.diffIds().size() + " diff_ids");
        }
        for (Descriptor d : layers) {
            Digests.hex(d.digest(), "image " + name + ": layer digest");
        }
        Progress progress = new Progress(layers, listener);
        for (int attempt = 1; ; attempt++) {
            writeBlobBytes(image.config().digest(), image.configJson());
            for (int i = 0; i < layers.size(); i++) {
                Descriptor layer = layers.get(i);
                ensureBlob(image.reference(), source, layer, progress);
                List<String> below = config.diffIds().subList(0, i);
                ensureLayer(name, layer, config.diffIds().get(i), below);
                progress.layerDone();
            }
            try (StoreLock.Held held = lock.acquire()) {
                if (complete(image, config)) {
                    ImageRecord record = new ImageRecord(image.manifestDigest(),
                            new BlobRef(image.config().digest(), image.config().size(), image.config().mediaType()),
                            layerRefs(layers, config.diffIds()), config.created(), Instant.now().toString());
                    writeJsonAtomically(root.resolve("images").resolve(manifestHex + ".json"), record);
                    Map<String, String> refs = readRefs();
                    for (String r : references) {
                        refs.put(r, image.manifestDigest());
                    }
                    writeJsonAtomically(root.resolve("refs.json"), new TreeMap<>(refs));
                    break;
                }
            }
            if (attempt == RECORD_ATTEMPTS) {
                throw new IOException("image " + name + ": its layers were garbage-collected while it was stored, "
                        + RECORD_ATTEMPTS + " times");
            }
            progress.restart();
        }
        return load(image.manifestDigest()).orElseThrow(() -> new IOException("image " + name + " vanished right after it was stored"));
    }

    // ---------------------------------------------------------------- images made on this worker

    /** OCI media types of what {@link #commit} writes. */
    public static final String OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
    public static final String OCI_CONFIG = "application/vnd.oci.image.config.v1+json";

    /**
     * A new lease: what it holds GC leaves alone until it is closed. Make an image from layers
     * ({@link #addLayer}, {@link #findLayer}, {@link #commit}, {@link #commitLayer}) under one,
     * and close it once the image is recorded.
     */
    public Lease lease() {
        return leases.open();
    }

    /**
     * A fresh path in the store's temp directory (not created), on the store's file system, for a
     * blob the caller writes and then hands to {@link #addLayer}. The caller deletes it if it
     * does not hand it over; a crash leaves it to the next {@link #open}.
     */
    public Path tempPath() {
        return newTemp();
    }

    /**
     * Adds a layer blob made on this worker (a template build's step): moves {@code blobFile} into
     * {@code blobs/} (unless that blob is there already) and unpacks it once, as a pulled layer.
     *
     * @param lease holds the blob and the layer until the image is recorded
     * @param blob the blob's digest, size and media type (the caller computed them while writing it)
     * @param diffId digest of the uncompressed tar; the unpack checks it
     * @param lowerDiffIds the layers below, bottom first (for hardlinks to lower files)
     * @return the layer, unpacked
     * @throws IOException when the blob does not match {@code blob} or {@code diffId}, or cannot be unpacked
     */
    public StoredImage.Layer addLayer(Lease lease, Path blobFile, Descriptor blob, String diffId, List<String> lowerDiffIds)
            throws IOException {
        String hex = Digests.hex(diffId, "layer diff_id");
        lease.hold(blob.digest(), diffId);
        Path target = blobPath(blob.digest());
        if (!(Files.isRegularFile(target) && Files.size(target) == blob.size())) {
            if (Files.size(blobFile) != blob.size()) {
                throw new IOException("layer " + blob.digest() + ": " + Files.size(blobFile) + " bytes, not " + blob.size());
            }
            moveIntoPlace(blobFile, target);
        } else {
            Files.deleteIfExists(blobFile);
        }
        ensureLayer("layer " + blob.digest(), blob, diffId, lowerDiffIds);
        return new StoredImage.Layer(blob.digest(), blob.size(), blob.mediaType(), diffId, layerPath(hex));
    }

    /**
     * The layer {@code blob} (unpacked to {@code diffId}) when both its blob and its tree are here,
     * held by {@code lease} from then on.
     */
    public Optional<StoredImage.Layer> findLayer(Lease lease, Descriptor blob, String diffId) throws IOException {
        lease.hold(blob.digest(), diffId);
        Path b = blobPath(blob.digest());
        if (!Files.isRegularFile(b) || Files.size(b) != blob.size() || !layerPresent(diffId)) {
            return Optional.empty();
        }
        return Optional.of(new StoredImage.Layer(blob.digest(), blob.size(), blob.mediaType(), diffId,
                layerPath(Digests.hex(diffId, "layer diff_id"))));
    }

    /**
     * Records an image made on this worker from layers already in the store ({@link #addLayer},
     * or layers of stored images): writes the config blob and an OCI image manifest (kept as a
     * blob too, so the image can be handed to other workers as it is) and names it {@code reference}.
     *
     * @param lease already holds the layers ({@link #addLayer}, {@link #findLayer}, {@link Lease#hold});
     *     this call adds the config and manifest blobs
     * @param configJson an image config whose {@code rootfs.diff_ids} lists {@code layers}' diff_ids
     * @param layers bottom first
     * @throws IOException when a layer is missing (GC removed it meanwhile) or the config does not
     *     list the layers
     */
    public StoredImage commit(Lease lease, String reference, byte[] configJson, List<StoredImage.Layer> layers)
            throws IOException {
        ImageReference ref;
        try {
            ref = ImageReference.parse(reference);
        } catch (IllegalArgumentException e) {
            throw new IOException("image " + reference + ": " + e.getMessage(), e);
        }
        Descriptor config = new Descriptor(OCI_CONFIG, Digests.of(configJson), configJson.length);
        List<Descriptor> descriptors = new ArrayList<>();
        for (StoredImage.Layer l : layers) {
            descriptors.add(new Descriptor(l.mediaType(), l.digest(), l.size()));
        }
        byte[] manifestJson = manifestJson(config, descriptors);
        String manifestDigest = Digests.of(manifestJson);
        lease.hold(config.digest(), null);
        lease.hold(manifestDigest, null);
        writeBlobBytes(manifestDigest, manifestJson);
        ResolvedImage image = new ResolvedImage(ref.withDigest(manifestDigest), manifestDigest, config, configJson, descriptors);
        ImageSource present = new ImageSource() {
            @Override
            public ResolvedImage resolve(ImageReference r) {
                return image;
            }

            @Override
            public void fetchBlob(ImageReference r, Descriptor blob, Path target, LongConsumer progress)
                    throws IOException {
                throw new IOException("blob " + blob.digest() + " of image " + reference + " is no longer in the store");
            }
        };
        return store(image, present, List.of(ref.toString()), p -> { });
    }

    /** The bytes of blob {@code digest} (a config or manifest made by {@link #commit}), if present. */
    public Optional<Path> blob(String digest) throws IOException {
        Path p = blobPath(digest);
        return Files.isRegularFile(p) ? Optional.of(p) : Optional.empty();
    }

    /** An OCI image manifest (image-spec {@code manifest.md}) of {@code config} and {@code layers}, compact JSON. */
    private static byte[] manifestJson(Descriptor config, List<Descriptor> layers) throws IOException {
        ObjectNode manifest = JSON.createObjectNode();
        manifest.put("schemaVersion", 2);
        manifest.put("mediaType", OCI_MANIFEST);
        manifest.set("config", descriptorJson(config));
        ArrayNode list = manifest.putArray("layers");
        layers.forEach(d -> list.add(descriptorJson(d)));
        return COMPACT.writeValueAsBytes(manifest);
    }

    private static ObjectNode descriptorJson(Descriptor d) {
        ObjectNode n = JSON.createObjectNode();
        n.put("mediaType", d.mediaType());
        n.put("digest", d.digest());
        n.put("size", d.size());
        return n;
    }

    private static List<LayerRef> layerRefs(List<Descriptor> layers, List<String> diffIds) {
        List<LayerRef> out = new ArrayList<>();
        for (int i = 0; i < layers.size(); i++) {
            Descriptor d = layers.get(i);
            out.add(new LayerRef(d.digest(), d.size(), d.mediaType() == null ? "" : d.mediaType(), diffIds.get(i)));
        }
        return out;
    }

    /** Under the lock: every blob and layer of {@code image} is in place (GC may have raced us). */
    private boolean complete(ResolvedImage image, ConfigBlob config) throws IOException {
        if (!Files.isRegularFile(blobPath(image.config().digest()))) {
            return false;
        }
        for (int i = 0; i < image.layers().size(); i++) {
            if (!Files.isRegularFile(blobPath(image.layers().get(i).digest())) || !layerPresent(config.diffIds().get(i))) {
                return false;
            }
        }
        return true;
    }

    private void writeBlobBytes(String digest, byte[] data) throws IOException {
        Path target = blobPath(digest);
        if (Files.isRegularFile(target) && Files.size(target) == data.length) {
            return;
        }
        Path tmp = newTemp();
        try {
            Files.write(tmp, data);
            moveIntoPlace(tmp, target);
        } finally {
            deleteQuietly(tmp);
        }
    }

    /** The blob in {@code blobs/}, fetched once per digest in this JVM (others wait for that fetch). */
    private void ensureBlob(ImageReference ref, ImageSource source, Descriptor blob, Progress progress) throws IOException {
        Path target = blobPath(blob.digest());
        if (Files.isRegularFile(target) && Files.size(target) == blob.size()) {
            progress.bytes(blob.size());
            return;
        }
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> theirs = fetching.putIfAbsent(blob.digest(), mine);
        if (theirs != null) {
            await(theirs);
            progress.bytes(blob.size());
            return;
        }
        try {
            if (!(Files.isRegularFile(target) && Files.size(target) == blob.size())) {
                Path tmp = newTemp();
                try {
                    source.fetchBlob(ref, blob, tmp, progress::bytes);
                    if (Files.size(tmp) != blob.size()) {
                        throw new IOException("blob " + blob.digest() + ": " + Files.size(tmp) + " bytes, the manifest says " + blob.size());
                    }
                    moveIntoPlace(tmp, target);
                } finally {
                    deleteQuietly(tmp);
                }
            } else {
                progress.bytes(blob.size());
            }
            mine.complete(null);
        } catch (IOException | RuntimeException e) {
            mine.completeExceptionally(e);
            throw e;
        } finally {
            fetching.remove(blob.digest(), mine);
        }
    }

    /** The layer {@code diffId} unpacked, once per diff_id in this JVM. */
    private void ensureLayer(String image, Descriptor blob, String diffId, List<String> lowerDiffIds) throws IOException {
        if (layerPresent(diffId)) {
            return;
        }
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> theirs = unpacking.putIfAbsent(diffId, mine);
        if (theirs != null) {
            await(theirs);
            return;
        }
        try {
            if (!layerPresent(diffId)) {
                unpackLayer(image, blob, diffId, lowerDiffIds);
            }
            mine.complete(null);
        } catch (IOException | RuntimeException e) {
            mine.completeExceptionally(e);
            throw e;
        } finally {
            unpacking.remove(diffId, mine);
        }
    }

    private void unpackLayer(String image, Descriptor blob, String diffId, List<String> lowerDiffIds) throws IOException {
        String hex = Digests.hex(diffId, "image " + image + ": diff_id");
        Path work = newTemp();
        try {
            Files.createDirectory(work);
            Path tree = Files.createDirectory(work.resolve("root"));
            LowerLayers lowers = () -> {
                List<Path> dirs = new ArrayList<>();
                for (int i = lowerDiffIds.size() - 1; i >= 0; i--) {
                    dirs.add(layerDir(lowerDiffIds.get(i)).resolve("root"));
                }
                return dirs;
            };
            UnpackResult result;
            try (InputStream in = Files.newInputStream(blobPath(blob.digest()))) {
                result = unpacker.unpack(in, tree, lowers);
            } catch (IOException e) {
                throw new IOException("image " + image + ": layer " + blob.digest() + ": " + e.getMessage(), e);
            }
            if (!result.diffId().equals(diffId)) {
                throw new IOException("image " + image + ": layer " + blob.digest() + " unpacks to diff_id " + result.diffId()
                        + " but the config says " + diffId);
            }
            Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwx--x--x"));
            writeJson(work.resolve("layer.json"), new LayerRecord(diffId, result.tarBytes(), result.entries(), result.skipped()));
            Path dest = layerDir(diffId);
            try {
                Files.move(work, dest, StandardCopyOption.ATOMIC_MOVE);
            } catch (FileAlreadyExistsException | DirectoryNotEmptyException e) {
                LOG.info("layer {} was unpacked by another process meanwhile; using that one", diffId);
                return;
            }
            layersUnpacked.incrementAndGet();
            makeLink(hex);
            if (!result.skipped().isEmpty()) {
                LOG.info("image {}: layer {}: left out {}", image, diffId, result.skipped());
            }
        } finally {
            deleteQuietly(work);
        }
    }

    /**
     * Creates the short link {@code l/<id>} of a layer already in place: {@code id} is the first 8
     * hex digits of the diff_id, 4 more for each clash with another layer's link.
     */
    private void makeLink(String hex) throws IOException {
        Path target = linkTarget(hex);
        for (int len = SHORT_ID_LENGTH; len <= hex.length(); len += 4) {
            Path link = root.resolve("l").resolve(hex.substring(0, len));
            Path existing = readLink(link);
            if (target.equals(existing)) {
                return;
            }
            if (existing != null) {
                continue;
            }
            Path tmp = newTemp();
            try {
                Files.createSymbolicLink(tmp, target);
                // rename(2) would replace a link made meanwhile by another process; link(2) fails instead
                Files.createLink(link, tmp);
                return;
            } catch (FileAlreadyExistsException e) {
                len -= 4;
            } finally {
                deleteQuietly(tmp);
            }
        }
    }

    /** The short link of a layer when it exists, else the layer's full path (always valid, just longer). */
    private Path layerPath(String hex) throws IOException {
        Path target = linkTarget(hex);
        for (int len = SHORT_ID_LENGTH; len <= hex.length(); len += 4) {
            Path link = root.resolve("l").resolve(hex.substring(0, len));
            Path existing = readLink(link);
            if (existing == null) {
                break;
            }
            if (existing.equals(target)) {
                return link;
            }
        }
        return root.resolve("layers").resolve(hex).resolve("root");
    }

    private static Path linkTarget(String hex) {
        return Path.of("..", "layers", hex, "root");
    }

    private static Path readLink(Path link) throws IOException {
        try {
            return Files.readSymbolicLink(link);
        } catch (NoSuchFileException e) {
            return null;
        } catch (NotLinkException e) {
            return Path.of("");
        }
    }

    // ---------------------------------------------------------------- reading

    /**
     * The image {@code reference} names, as the disk says now.
     *
     * @throws IllegalArgumentException when {@code reference} is malformed
     */
    public Optional<StoredImage> find(String reference) throws IOException {
        ImageReference ref = ImageReference.parse(reference);
        String digest = readRefs().get(ref.toString());
        if (digest == null) {
            digest = ref.digest();
        }
        return digest == null ? Optional.empty() : load(digest);
    }

    /** Every complete image, newest record first. */
    public List<StoredImage> list() throws IOException {
        List<StoredImage> out = new ArrayList<>();
        Map<String, List<String>> names = namesByDigest(readRefs());
        for (String digest : recordedDigests()) {
            load(digest, names).ifPresent(out::add);
        }
        out.sort(Comparator.comparing(StoredImage::created).reversed().thenComparing(StoredImage::manifestDigest));
        return out;
    }

    private Optional<StoredImage> load(String digest) throws IOException {
        return load(digest, namesByDigest(readRefs()));
    }

    private Optional<StoredImage> load(String digest, Map<String, List<String>> names) throws IOException {
        if (!Digests.isValid(digest)) {
            return Optional.empty();
        }
        Path recordFile = root.resolve("images").resolve(digest.substring(7) + ".json");
        ImageRecord record;
        try {
            record = JSON.readValue(recordFile.toFile(), ImageRecord.class);
        } catch (NoSuchFileException | FileNotFoundException e) {
            return Optional.empty();
        }
        byte[] configJson;
        try {
            configJson = Files.readAllBytes(blobPath(record.config().digest()));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
        ConfigBlob config = ConfigBlob.parse(configJson, digest);
        List<StoredImage.Layer> layers = new ArrayList<>();
        for (LayerRef l : record.layers()) {
            if (!layerPresent(l.diffId())) {
                return Optional.empty();
            }
            Path dir = layerPath(Digests.hex(l.diffId(), "layer"));
            layers.add(new StoredImage.Layer(l.digest(), l.size(), l.mediaType(), l.diffId(), dir));
        }
        return Optional.of(new StoredImage(record.manifestDigest(), names.getOrDefault(digest, List.of()),
                record.config().digest(), record.created() == null ? "" : record.created(), layers, config.config()));
    }

    private List<String> recordedDigests() throws IOException {
        List<String> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(root.resolve("images"))) {
            s.forEach(p -> {
                String n = p.getFileName().toString();
                if (n.endsWith(".json") && Digests.isValid("sha256:" + n.substring(0, n.length() - 5))) {
                    out.add("sha256:" + n.substring(0, n.length() - 5));
                }
            });
        }
        return out;
    }

    private static Map<String, List<String>> namesByDigest(Map<String, String> refs) {
        Map<String, List<String>> out = new HashMap<>();
        refs.forEach((ref, digest) -> out.computeIfAbsent(digest, d -> new ArrayList<>()).add(ref));
        out.values().forEach(l -> l.sort(null));
        return out;
    }

    private Map<String, String> readRefs() throws IOException {
        Path file = root.resolve("refs.json");
        try {
            return new HashMap<>(JSON.readValue(file.toFile(), new TypeReference<Map<String, String>>() {}));
        } catch (NoSuchFileException | FileNotFoundException e) {
            return new HashMap<>();
        }
    }

    // ---------------------------------------------------------------- snapshots

    /**
     * Tells GC which layer directories live sandboxes run on (their overlay mounts hold them):
     * such a layer is never removed, even when no image names it any more (a deleted snapshot).
     * The supplier is called under the store's lock at every GC; it must not block.
     */
    public void layersInUse(Supplier<Collection<Path>> inUse) {
        this.layersInUse = Objects.requireNonNull(inUse, "inUse");
    }

    private Set<String> diffIdsInUse() throws IOException {
        Set<String> out = new HashSet<>();
        for (Path p : layersInUse.get()) {
            diffIdOf(p).ifPresent(out::add);
        }
        return out;
    }

    /** The whiteout form this store's layers use (new layers must use it too). */
    public WhiteoutForm whiteoutForm() {
        return unpacker.whiteoutForm();
    }

    /**
     * A fresh work directory in {@code tmp/} for a layer made outside a pull (a snapshot): fill
     * {@code <work>/root}, then {@link #commitLayer}; delete it with {@link #discard} on failure.
     */
    public Path newLayerWork() throws IOException {
        Path work = newTemp();
        Files.createDirectory(work);
        Files.createDirectory(work.resolve("root"));
        return work;
    }

    /** Removes a work directory that was not committed; quiet. */
    public void discard(Path work) {
        deleteQuietly(work);
    }

    /**
     * Moves a filled work directory into {@code layers/} under its content id {@code diffId}; when
     * the store already holds that layer the work is discarded (same content, one copy).
     *
     * @param bytes content bytes of the layer, recorded in its {@code layer.json}
     * @param entries entries in the layer
     * @param lease holds the layer until its snapshot is recorded
     * @return {@code diffId}
     */
    public String commitLayer(Lease lease, Path work, String diffId, long bytes, long entries, List<String> skipped)
            throws IOException {
        String hex = Digests.hex(diffId, "layer");
        lease.hold(null, diffId);
        try {
            if (layerPresent(diffId)) {
                return diffId;
            }
            Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwx--x--x"));
            writeJson(work.resolve("layer.json"), new LayerRecord(diffId, bytes, entries, skipped));
            try {
                Files.move(work, layerDir(diffId), StandardCopyOption.ATOMIC_MOVE);
            } catch (FileAlreadyExistsException | DirectoryNotEmptyException e) {
                return diffId; // made meanwhile by another capture of the same content
            }
            makeLink(hex);
            return diffId;
        } finally {
            deleteQuietly(work);
        }
    }

    /**
     * Records a snapshot image named {@code snapshotId}: the layers {@code diffIds} (bottom first,
     * all in the store) with {@code config}, a config blob and an image record written for it.
     * A snapshot of the same id is replaced (the id then names the new image).
     *
     * @param onBuiltInRoot the layers go on top of the runtime's built-in root (a snapshot of a
     *     sandbox of {@code base} or of a template built on it): recorded as the label
     *     {@link io.agentbox.worker.image.BuiltImageLabels#BASE}, as a template build does
     * @throws IOException when a layer is missing (GC raced) or the files cannot be written
     */
    public StoredImage recordSnapshot(String snapshotId, List<String> diffIds, ImageConfig config,
                                      boolean onBuiltInRoot) throws IOException {
        requireSnapshotId(snapshotId);
        String created = Instant.now().toString();
        Map<String, Object> cfg = new LinkedHashMap<>();
        cfg.put("created", created);
        cfg.put("os", "linux");
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("Env", config.env());
        c.put("Entrypoint", config.entrypoint());
        c.put("Cmd", config.cmd());
        c.put("WorkingDir", config.workingDir());
        c.put("User", config.user());
        Map<String, String> labels = new TreeMap<>(config.labels());
        if (onBuiltInRoot) {
            labels.put(BuiltImageLabels.BASE, BuiltImageLabels.BUILT_IN_ROOT);
        } else {
            labels.remove(BuiltImageLabels.BASE);
        }
        c.put("Labels", labels);
        cfg.put("config", c);
        cfg.put("rootfs", Map.of("type", "layers", "diff_ids", diffIds));
        cfg.put("agentbox.snapshot", snapshotId);
        byte[] configJson = COMPACT.writeValueAsBytes(cfg);
        String configDigest = Digests.of(configJson);
        List<LayerRef> layers = new ArrayList<>();
        for (String d : diffIds) {
            layers.add(new LayerRef(d, 0, "", d)); // no blob: the layer exists unpacked only
        }
        byte[] manifest = COMPACT.writeValueAsBytes(Map.of("config", configDigest, "layers", diffIds));
        String manifestDigest = Digests.of(manifest);
        writeBlobBytes(configDigest, configJson);
        try (StoreLock.Held held = lock.acquire()) {
            for (String d : diffIds) {
                if (!layerPresent(d)) {
                    throw new IOException("snapshot " + snapshotId + ": layer " + d + " is not in the store");
                }
            }
            if (!Files.isRegularFile(blobPath(configDigest))) {
                writeBlobBytes(configDigest, configJson);
            }
            ImageRecord record = new ImageRecord(manifestDigest, new BlobRef(configDigest, configJson.length,
                    "application/vnd.oci.image.config.v1+json"), layers, created, created);
            writeJsonAtomically(root.resolve("images").resolve(manifestDigest.substring(7) + ".json"), record);
            Map<String, String> snaps = readSnapshots();
            snaps.put(snapshotId, manifestDigest);
            writeJsonAtomically(root.resolve("snapshots.json"), new TreeMap<>(snaps));
        }
        return findSnapshot(snapshotId).orElseThrow(() -> new IOException("snapshot " + snapshotId + " vanished right after it was stored"));
    }

    /** The image of snapshot {@code snapshotId}, as the disk says now. */
    public Optional<StoredImage> findSnapshot(String snapshotId) throws IOException {
        String digest = readSnapshots().get(snapshotId);
        if (digest == null) {
            return Optional.empty();
        }
        return load(digest, Map.of(digest, List.of(snapshotId)));
    }

    /** Snapshot ids this store holds, sorted. */
    public List<String> snapshots() throws IOException {
        return new ArrayList<>(new TreeMap<>(readSnapshots()).keySet());
    }

    /**
     * Forgets the name {@code snapshotId}; its image and the layers only it used go at the next
     * {@link #gcReleased} that finds no live sandbox on them.
     *
     * @return false when the store had no such snapshot
     */
    public boolean removeSnapshot(String snapshotId) throws IOException {
        try (StoreLock.Held held = lock.acquire()) {
            Map<String, String> snaps = readSnapshots();
            if (snaps.remove(snapshotId) == null) {
                return false;
            }
            writeJsonAtomically(root.resolve("snapshots.json"), new TreeMap<>(snaps));
            return true;
        }
    }

    /**
     * A layer blob this store holds for a layer directory.
     *
     * @param blob the blob (compressed tar) with its media type
     * @param tarDiffId the digest of its uncompressed tar, as an image config lists it (for a layer
     *     unpacked from this blob it is also the directory's id; for an exported snapshot layer the
     *     directory keeps its content id)
     */
    public record LayerBlob(Descriptor blob, String tarDiffId) {}

    /**
     * A blob for the layer directory {@code diffId}, taken from any recorded image whose layer is
     * that directory and whose blob is still here (with a media type); empty when none is.
     */
    public Optional<LayerBlob> layerBlob(String diffId) throws IOException {
        for (String digest : recordedDigests()) {
            ImageRecord record;
            try {
                record = JSON.readValue(root.resolve("images").resolve(digest.substring(7) + ".json").toFile(), ImageRecord.class);
            } catch (NoSuchFileException | FileNotFoundException e) {
                continue; // collected meanwhile
            }
            for (int i = 0; i < record.layers().size(); i++) {
                LayerRef l = record.layers().get(i);
                if (!l.diffId().equals(diffId) || l.digest().equals(l.diffId()) || l.mediaType() == null
                        || l.mediaType().isEmpty()) {
                    continue; // another layer, or a snapshot layer recorded without a blob
                }
                Path blob = blobPath(l.digest());
                Optional<Path> config = blob(record.config().digest());
                if (!Files.isRegularFile(blob) || Files.size(blob) != l.size() || config.isEmpty()) {
                    continue;
                }
                List<String> tarDiffIds = ConfigBlob.parse(Files.readAllBytes(config.get()), digest).diffIds();
                if (tarDiffIds.size() == record.layers().size()) {
                    return Optional.of(new LayerBlob(new Descriptor(l.mediaType(), l.digest(), l.size()), tarDiffIds.get(i)));
                }
            }
        }
        return Optional.empty();
    }

    /**
     * One layer of a snapshot's OCI form.
     *
     * @param blob the layer blob
     * @param file the blob's file in this store's {@link #tempPath() temp directory} when it was just
     *     written (moved into {@code blobs/} by {@link #recordExport}), null for a blob the store holds
     * @param dirDiffId the layer directory the blob stands for (the snapshot image's layer)
     */
    public record ExportLayer(Descriptor blob, Path file, String dirDiffId) {}

    /**
     * Gives snapshot {@code snapshotId} an OCI form: stores the layer blobs, {@code configJson}
     * (its {@code rootfs.diff_ids} are the blobs' tar digests) and an OCI manifest as blobs, writes an
     * image record whose layers are the snapshot's own layer directories, and points the snapshot's
     * name at it. Sandboxes keep running on the same directories; the old record goes at the next GC.
     *
     * @param expected the manifest digest the name points at now; the call fails when it changed
     * @return the manifest digest
     * @throws IOException when the snapshot was deleted or replaced, a layer or a reused blob was
     *     collected meanwhile, or the disk fails; the name is left as it was then
     */
    public String recordExport(String snapshotId, String expected, byte[] configJson, List<ExportLayer> layers)
            throws IOException {
        ConfigBlob parsed = ConfigBlob.parse(configJson, snapshotId);
        if (parsed.diffIds().size() != layers.size()) {
            throw new IOException("snapshot " + snapshotId + ": the config lists " + parsed.diffIds().size()
                    + " diff_ids for " + layers.size() + " layers");
        }
        Descriptor config = new Descriptor(OCI_CONFIG, Digests.of(configJson), configJson.length);
        List<Descriptor> blobs = layers.stream().map(ExportLayer::blob).toList();
        byte[] manifest = manifestJson(config, blobs);
        String manifestDigest = Digests.of(manifest);
        try (StoreLock.Held held = lock.acquire()) {
            Map<String, String> snaps = readSnapshots();
            if (!expected.equals(snaps.get(snapshotId))) {
                throw new IOException("snapshot " + snapshotId + " was deleted or replaced while it was exported");
            }
            List<LayerRef> refs = new ArrayList<>();
            for (ExportLayer l : layers) {
                if (!layerPresent(l.dirDiffId())) {
                    throw new IOException("snapshot " + snapshotId + ": layer " + l.dirDiffId() + " is not in the store");
                }
                Path target = blobPath(l.blob().digest());
                if (l.file() != null) {
                    moveIntoPlace(l.file(), target);
                }
                if (!Files.isRegularFile(target) || Files.size(target) != l.blob().size()) {
                    throw new IOException("snapshot " + snapshotId + ": blob " + l.blob().digest() + " was collected meanwhile");
                }
                refs.add(new LayerRef(l.blob().digest(), l.blob().size(), l.blob().mediaType(), l.dirDiffId()));
            }
            writeBlobBytes(config.digest(), configJson);
            writeBlobBytes(manifestDigest, manifest);
            ImageRecord record = new ImageRecord(manifestDigest, new BlobRef(config.digest(), config.size(), OCI_CONFIG), refs,
                    parsed.created(), Instant.now().toString());
            writeJsonAtomically(root.resolve("images").resolve(manifestDigest.substring(7) + ".json"), record);
            snaps.put(snapshotId, manifestDigest);
            writeJsonAtomically(root.resolve("snapshots.json"), new TreeMap<>(snaps));
        }
        return manifestDigest;
    }

    /**
     * The diff_id of a layer directory of this store as handed to runtimes (its short link
     * {@code l/<id>} or {@code layers/<hex>/root}); empty for any other path.
     */
    public Optional<String> diffIdOf(Path layerDir) throws IOException {
        Path p = layerDir.toAbsolutePath().normalize();
        if (p.getParent() != null && p.getParent().equals(root.resolve("l"))) {
            Path target = readLink(p);
            if (target == null || target.getNameCount() != 4) {
                return Optional.empty();
            }
            p = root.resolve("l").resolve(target).normalize();
        }
        if (p.getFileName() != null && p.getFileName().toString().equals("root") && p.getParent() != null
                && p.getParent().getParent() != null && p.getParent().getParent().equals(root.resolve("layers"))) {
            String d = "sha256:" + p.getParent().getFileName();
            return Digests.isValid(d) ? Optional.of(d) : Optional.empty();
        }
        return Optional.empty();
    }

    private Map<String, String> readSnapshots() throws IOException {
        Path file = root.resolve("snapshots.json");
        try {
            return new HashMap<>(JSON.readValue(file.toFile(), new TypeReference<Map<String, String>>() {}));
        } catch (NoSuchFileException | FileNotFoundException e) {
            return new HashMap<>();
        }
    }

    /** Snapshot ids are the hub's template-like ids ({@code <id>:<tag>}, {@code <team>/<name>:<tag>}). */
    private static void requireSnapshotId(String id) {
        if (id == null || id.isEmpty() || id.length() > 256 || !id.matches("[A-Za-z0-9][A-Za-z0-9._/:-]*")) {
            throw new IllegalArgumentException("invalid snapshot id '" + id + "'");
        }
    }

    // ---------------------------------------------------------------- GC

    /**
     * What a {@link #gcReleased} removed.
     *
     * @param images image records deleted (with every reference to them)
     * @param layers unpacked layers deleted
     * @param blobs blobs deleted
     * @param bytes size of the deleted blobs
     */
    public record GcResult(int images, int layers, int blobs, long bytes) {}

    /**
     * Deletes every image that no reference other than {@code released} (normalised) names and no
     * snapshot names, with its references, then every layer and blob no kept image needs. Which
     * images are named is read under the store's lock, so an image recorded while the caller worked
     * out what it released stays (a build finishing, a pull). Layers being unpacked, blobs being
     * fetched by this JVM, layers live sandboxes run on ({@link #layersInUse}) and what open
     * {@link Lease}s hold are left alone.
     */
    public GcResult gcReleased(Set<String> released) throws IOException {
        Set<String> gone = new HashSet<>();
        for (String r : released) {
            try {
                gone.add(ImageReference.parse(r).toString());
            } catch (IllegalArgumentException e) {
                // names nothing this store holds
            }
        }
        try (StoreLock.Held held = lock.acquire()) {
            Map<String, String> refs = readRefs();
            Set<String> keepImages = new HashSet<>();
            refs.forEach((ref, digest) -> {
                if (!gone.contains(ref)) {
                    keepImages.add(digest);
                }
            });
            keepImages.addAll(readSnapshots().values());
            int images = 0;
            Set<String> keepLayers = new HashSet<>(diffIdsInUse());
            Set<String> keepBlobs = new HashSet<>();
            for (String digest : recordedDigests()) {
                Path file = root.resolve("images").resolve(digest.substring(7) + ".json");
                if (!keepImages.contains(digest)) {
                    Files.deleteIfExists(file);
                    images++;
                    continue;
                }
                ImageRecord record = JSON.readValue(file.toFile(), ImageRecord.class);
                keepBlobs.add(digest); // the manifest, when this store wrote one (commit, recordExport)
                keepBlobs.add(record.config().digest());
                for (LayerRef l : record.layers()) {
                    keepBlobs.add(l.digest());
                    keepLayers.add(l.diffId());
                }
            }
            refs.values().removeIf(d -> !keepImages.contains(d));
            writeJsonAtomically(root.resolve("refs.json"), new TreeMap<>(refs));

            int layers = 0;
            try (Stream<Path> s = Files.list(root.resolve("layers"))) {
                for (Path dir : (Iterable<Path>) s::iterator) {
                    String diffId = "sha256:" + dir.getFileName();
                    if (!keepLayers.contains(diffId) && !unpacking.containsKey(diffId) && !leases.holdsLayer(diffId)) {
                        Path doomed = newTemp();
                        Files.move(dir, doomed, StandardCopyOption.ATOMIC_MOVE);
                        Trees.deleteRecursively(doomed);
                        layers++;
                    }
                }
            }
            removeDanglingLinks();
            int blobs = 0;
            long bytes = 0;
            try (Stream<Path> s = Files.list(root.resolve("blobs/sha256"))) {
                for (Path blob : (Iterable<Path>) s::iterator) {
                    String digest = "sha256:" + blob.getFileName();
                    if (!keepBlobs.contains(digest) && !fetching.containsKey(digest) && !leases.holdsBlob(digest)) {
                        bytes += Files.size(blob);
                        Files.delete(blob);
                        blobs++;
                    }
                }
            }
            return new GcResult(images, layers, blobs, bytes);
        }
    }

    // ---------------------------------------------------------------- housekeeping

    /** Removes temp entries whose process is gone, and links to layers that never arrived. */
    private void cleanUp() throws IOException {
        try (StoreLock.Held held = lock.acquire()) {
            try (Stream<Path> s = Files.list(root.resolve("tmp"))) {
                for (Path p : (Iterable<Path>) s::iterator) {
                    if (!ownerAlive(p.getFileName().toString())) {
                        Trees.deleteRecursively(p);
                    }
                }
            }
            removeDanglingLinks();
            try (Stream<Path> s = Files.list(root.resolve("layers"))) {
                for (Path dir : (Iterable<Path>) s::iterator) {
                    if (Files.isRegularFile(dir.resolve("layer.json"))) {
                        makeLink(dir.getFileName().toString());
                    }
                }
            }
        }
    }

    private void removeDanglingLinks() throws IOException {
        try (Stream<Path> s = Files.list(root.resolve("l"))) {
            for (Path link : (Iterable<Path>) s::iterator) {
                if (!Files.exists(link)) {
                    Files.deleteIfExists(link);
                }
            }
        }
    }

    /** Whether the process that made temp entry {@code name} ({@code <pid>-<start millis>-<n>}) still runs. */
    private static boolean ownerAlive(String name) {
        String[] parts = name.split("-", 3);
        if (parts.length < 3) {
            return false;
        }
        try {
            long pid = Long.parseLong(parts[0]);
            long start = Long.parseLong(parts[1]);
            return ProcessHandle.of(pid).map(h -> startMillis(h) == start).orElse(false);
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private static long startMillis(ProcessHandle h) {
        return h.info().startInstant().map(Instant::toEpochMilli).orElse(0L);
    }

    private Path newTemp() {
        return root.resolve("tmp").resolve(tmpPrefix + tmpCounter.incrementAndGet());
    }

    private Path blobPath(String digest) throws IOException {
        return root.resolve("blobs/sha256").resolve(Digests.hex(digest, "blob"));
    }

    private Path layerDir(String diffId) throws IOException {
        return root.resolve("layers").resolve(Digests.hex(diffId, "layer"));
    }

    private boolean layerPresent(String diffId) throws IOException {
        return Files.isRegularFile(layerDir(diffId).resolve("layer.json"), NOFOLLOW);
    }

    private static void moveIntoPlace(Path tmp, Path target) throws IOException {
        try {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            throw new IOException("store temp dir and " + target.getParent() + " must be on one file system", e);
        }
    }

    private void writeJsonAtomically(Path target, Object value) throws IOException {
        Path tmp = newTemp();
        try {
            writeJson(tmp, value);
            moveIntoPlace(tmp, target);
        } finally {
            deleteQuietly(tmp);
        }
    }

    private static void writeJson(Path file, Object value) throws IOException {
        JSON.writeValue(file.toFile(), value);
    }

    private static void deleteQuietly(Path p) {
        try {
            Trees.deleteRecursively(p);
        } catch (IOException e) {
            LOG.warn("cannot remove {}: {}", p, e.toString());
        }
    }

    private static void await(CompletableFuture<Void> f) throws IOException {
        try {
            f.join();
        } catch (CompletionException e) {
            Throwable c = e.getCause();
            if (c instanceof IOException io) {
                throw new IOException(io.getMessage(), io);
            }
            if (c instanceof RuntimeException r) {
                throw r;
            }
            throw new UncheckedIOException(new IOException(c));
        }
    }

    /** Progress of one pull: counts what it is told and throttles listener calls. */
    private static final class Progress {
        private final PullListener listener;
        private final int layersTotal;
        private final long bytesTotal;
        private int layersDone;
        private long bytesDone;
        private long lastReported = -1;

        Progress(List<Descriptor> layers, PullListener listener) {
            this.listener = listener;
            this.layersTotal = layers.size();
            this.bytesTotal = layers.stream().mapToLong(Descriptor::size).sum();
            report(true);
        }

        synchronized void bytes(long n) {
            bytesDone = Math.min(bytesTotal, bytesDone + n);
            report(false);
        }

        synchronized void layerDone() {
            layersDone++;
            report(true);
        }

        synchronized void restart() {
            layersDone = 0;
            bytesDone = 0;
            report(true);
        }

        private void report(boolean always) {
            if (always || bytesDone - lastReported >= PROGRESS_STEP || bytesDone == bytesTotal) {
                lastReported = bytesDone;
                listener.progress(new PullProgress(layersDone, layersTotal, bytesDone, bytesTotal));
            }
        }
    }
}
