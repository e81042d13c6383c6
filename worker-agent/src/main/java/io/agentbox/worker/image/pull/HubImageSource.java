package io.agentbox.worker.image.pull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentbox.protocol.image.BlobStreams;
import io.agentbox.protocol.image.ImageReference;
import io.agentbox.protocol.v1.BlobChunk;
import io.agentbox.protocol.v1.BlobRef;
import io.agentbox.protocol.v1.SyncServiceGrpc;
import io.agentbox.worker.image.Descriptor;
import io.agentbox.worker.image.ImageSource;
import io.agentbox.worker.image.ResolvedImage;
import io.agentbox.worker.image.registry.Manifests;
import io.grpc.Channel;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongConsumer;

/**
 * Images under the {@value ImageReference#BUILDS_REGISTRY} pseudo-registry, read from the blobs the
 * hub keeps ({@code SyncService.ReadBlob} over this worker's tunnel; docs/template-builds.md,
 * "Where built layers live"). No registry answers that name: the hub copied every blob of a built
 * image from the worker that built it before the build turned ready.
 *
 * <p>A reference must be pinned to its manifest digest ({@code builds.agentbox.internal/<id>:<build>@sha256:…},
 * as the hub's templates name built images): the manifest is fetched by that digest, so nothing
 * is taken on the hub's word. Every blob is checked by {@link BlobStreams#read} (size, SHA-256 of
 * exactly the bytes received); the image store then unpacks and checks diff_ids as for a registry
 * pull.
 */
public final class HubImageSource implements ImageSource {
    /** Largest manifest or config taken: 4 MiB (ours are a few KiB). */
    static final long MAX_JSON_BYTES = 4L << 20;
    /** Longest one blob may take to arrive. */
    static final long BLOB_DEADLINE_MINUTES = 60;
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Reads one blob by digest: a blocking stub's server-streaming call (with its deadline). */
    private final Function<BlobRef, Iterator<BlobChunk>> read;

    /** @param read {@code SyncServiceBlockingStub::readBlob} of the hub's channel, or a stand-in in tests */
    public HubImageSource(Function<BlobRef, Iterator<BlobChunk>> read) {
        this.read = read;
    }

    /** Over the hub's sync service on {@code hubChannel}. */
    public static HubImageSource over(Channel hubChannel) {
        SyncServiceGrpc.SyncServiceBlockingStub stub =
                SyncServiceGrpc.newBlockingStub(hubChannel);
        return new HubImageSource(r -> stub.withDeadlineAfter(BLOB_DEADLINE_MINUTES, TimeUnit.MINUTES).readBlob(r));
    }

    @Override
    public ResolvedImage resolve(ImageReference ref) throws IOException {
        if (ref.digest() == null) {
            throw new IOException("image " + ref + ": a built image is fetched from the hub by its manifest digest, and this "
                    + "reference has none");
        }
        String what = "image " + ref;
        byte[] manifestJson = small(ref.digest(), what + ": manifest");
        JsonNode manifest;
        try {
            manifest = JSON.readTree(manifestJson);
        } catch (IOException e) {
            throw new IOException(what + ": the manifest is not JSON: " + e.getMessage(), e);
        }
        if (manifest == null || !manifest.isObject()) {
            throw new IOException(what + ": the manifest is not a JSON object");
        }
        Descriptor config = Manifests.config(manifest, what);
        List<Descriptor> layers = Manifests.layers(manifest, what);
        if (config.size() > MAX_JSON_BYTES) {
            throw new IOException(what + ": config of " + config.size() + " bytes (at most " + MAX_JSON_BYTES + ")");
        }
        byte[] configJson = small(config.digest(), what + ": config");
        if (configJson.length != config.size()) {
            throw new IOException(what + ": config is " + configJson.length + " bytes, the manifest says " + config.size());
        }
        return new ResolvedImage(ref, ref.digest(), config, configJson, layers);
    }

    @Override
    public void fetchBlob(ImageReference ref, Descriptor blob, Path target, LongConsumer progress) throws IOException {
        boolean done = false;
        try (OutputStream out = Files.newOutputStream(target)) {
            BlobStreams.read(read, blob.digest(), blob.size(), blob.size(), out, progress);
            done = true;
        } catch (NoSuchFileException e) {
            throw new IOException("blob " + blob.digest() + " of image " + ref + ": the hub does not hold it ("
                    + e.getReason() + ")", e);
        } catch (IOException e) {
            throw new IOException(e.getMessage() + " (image " + ref + ", from the hub)", e);
        } finally {
            if (!done) {
                Files.deleteIfExists(target);
            }
        }
    }

    private byte[] small(String digest, String what) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            BlobStreams.read(read, digest, -1, MAX_JSON_BYTES, out, n -> { });
        } catch (NoSuchFileException e) {
            throw new IOException(what + " " + digest + ": the hub does not hold it (" + e.getReason() + ")", e);
        } catch (IOException e) {
            throw new IOException(what + ": " + e.getMessage(), e);
        }
        return out.toByteArray();
    }
}
