package io.agentbox.wsproxy.blobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.protocol.ErrorReason;
import io.agentbox.protocol.image.BlobStreams;
import io.agentbox.protocol.v1.BlobChunk;
import io.agentbox.protocol.v1.BlobRef;
import io.agentbox.protocol.v1.ClusterConfig;
import io.agentbox.protocol.v1.SyncServiceGrpc;
import io.agentbox.protocol.v1.Template;
import io.agentbox.wsproxy.TunnelRegistry;
import io.agentbox.wsproxy.sync.HubWatches;
import io.agentbox.wsproxy.sync.SyncServiceImpl;
import io.agentbox.wsproxy.sync.TunnelIdentity;
import io.agentbox.wsproxy.sync.WatchCache;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The hub's content-addressed blob store, and {@code SyncService.ReadBlob} serving it. */
class BlobStoreTest {
    @TempDir
    Path dir;

    private static String digest(byte[] data) {
        var sha = BlobStreams.sha256();
        sha.update(data);
        return BlobStreams.digestOf(sha);
    }

    private static byte[] random(int n) {
        byte[] b = new byte[n];
        new Random(n).nextBytes(b);
        return b;
    }

    @Test
    void aBlobIsStoredUnderItsDigestOnceAndReadBack() throws IOException {
        BlobStore store = BlobStore.open(dir);
        byte[] data = random(3 * BlobStreams.CHUNK_BYTES + 5);
        String d = digest(data);
        AtomicInteger calls = new AtomicInteger();
        assertThat(store.put(d, data.length, o -> {
            calls.incrementAndGet();
            o.write(data);
        })).isTrue();
        assertThat(store.put(d, data.length, o -> calls.incrementAndGet())).as("the same digest is not written again").isFalse();
        assertThat(calls).hasValue(1);
        assertThat(store.has(d)).isTrue();
        assertThat(store.size(d)).isEqualTo(data.length);
        assertThat(Files.readAllBytes(store.path(d).orElseThrow())).isEqualTo(data);
        assertThat(store.path(d).orElseThrow()).isEqualTo(dir.resolve("sha256").resolve(d.substring(7)));
        assertThat(store.digests()).containsExactly(d);
        assertTmpEmpty();
    }

    @Test
    void bytesOfAnotherDigestOrSizeAreRefusedAndNothingStays() throws IOException {
        BlobStore store = BlobStore.open(dir);
        byte[] data = "layer".getBytes(StandardCharsets.UTF_8);
        String d = digest(data);
        assertThatThrownBy(() -> store.put(d, data.length, o -> o.write("LAYER".getBytes(StandardCharsets.UTF_8))))
                .hasMessageContaining("digest mismatch");
        assertThatThrownBy(() -> store.put(d, data.length, o -> o.write(data, 0, 3)))
                .hasMessageContaining("3 bytes written, 5 expected");
        assertThatThrownBy(() -> store.put(d, data.length, o -> {
            o.write(data);
            o.write('!');
        })).hasMessageContaining("more than the 5 bytes expected");
        assertThatThrownBy(() -> store.put(d, data.length, o -> {
            throw new IOException("the worker went away");
        })).hasMessageContaining("the worker went away");
        assertThatThrownBy(() -> store.put("sha256:ABC", 1, o -> { })).hasMessageContaining("not sha256");
        assertThatThrownBy(() -> store.put(d, -1, o -> { })).hasMessageContaining("outside");
        assertThat(store.has(d)).isFalse();
        assertThat(store.digests()).isEmpty();
        assertTmpEmpty();
    }

    @Test
    void retainOnlyKeepsWhatIsNamedOrPinned() throws IOException {
        BlobStore store = BlobStore.open(dir);
        String a = put(store, "a");
        String b = put(store, "b");
        String c = put(store, "c");
        try (BlobStore.Pin pin = store.pin(List.of(b))) {
            BlobStore.Removed r = store.retainOnly(Set.of(a));
            assertThat(r.blobs()).isEqualTo(1);
            assertThat(r.bytes()).isEqualTo(1);
            assertThat(store.digests()).containsExactlyInAnyOrder(a, b);
            assertThat(store.has(c)).isFalse();
        }
        store.retainOnly(Set.of(a));
        assertThat(store.digests()).as("the pin is closed").containsExactly(a);
    }

    @Test
    void openRemovesWhatAnEarlierProcessLeftHalfWritten() throws IOException {
        Files.createDirectories(dir.resolve("tmp"));
        Files.writeString(dir.resolve("tmp/7"), "half");
        BlobStore.open(dir);
        assertTmpEmpty();
    }

    @Test
    void readBlobServesTheStoreToAClusterAndNamesWhatIsMissing() throws Exception {
        BlobStore store = BlobStore.open(dir);
        byte[] data = random(BlobStreams.CHUNK_BYTES * 2); // exactly two full chunks
        String d = digest(data);
        store.put(d, data.length, o -> o.write(data));
        String empty = put(store, "");
        TunnelRegistry registry = new TunnelRegistry(Clock.systemUTC());
        HubWatches watches = new HubWatches(new WatchCache<>(Template::getName), new WatchCache<>(
                io.agentbox.protocol.v1.ApiKey::getKeyHash), new WatchCache<>(ClusterConfig::getClusterId));
        String name = UUID.randomUUID().toString();
        SyncServiceImpl sync = new SyncServiceImpl(registry, watches, store);
        Server server = InProcessServerBuilder.forName(name).addService(io.grpc.ServerInterceptors.intercept(sync,
                new TunnelIdentity(remote -> "c1"))).build().start();
        ManagedChannel channel = InProcessChannelBuilder.forName(name).build();
        try {
            SyncServiceGrpc.SyncServiceBlockingStub stub = SyncServiceGrpc.newBlockingStub(channel);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            assertThat(BlobStreams.read(stub::readBlob, d, data.length, data.length, out, n -> { })).isEqualTo(data.length);
            assertThat(out.toByteArray()).isEqualTo(data);
            Iterator<BlobChunk> chunks = stub.readBlob(BlobRef.newBuilder().setDigest(d).build());
            List<BlobChunk> all = new java.util.ArrayList<>();
            chunks.forEachRemaining(all::add);
            assertThat(all).extracting(c -> c.getData().size()).containsExactly(BlobStreams.CHUNK_BYTES, BlobStreams.CHUNK_BYTES);
            assertThat(all.get(0).getSize()).isEqualTo(data.length);
            assertThat(BlobStreams.read(stub::readBlob, empty, 0, 0, new ByteArrayOutputStream(), n -> { })).isZero();

            String missing = digest("nothing".getBytes(StandardCharsets.UTF_8));
            assertThatThrownBy(() -> stub.readBlob(BlobRef.newBuilder().setDigest(missing).build()).next())
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
                        assertThat(ErrorReason.BLOB_NOT_FOUND.in(e)).isTrue();
                        assertThat(e.getStatus().getDescription()).isEqualTo("the hub has no blob " + missing);
                    });
            assertThatThrownBy(() -> stub.readBlob(BlobRef.newBuilder().setDigest("sha256:../../etc/passwd").build()).next())
                    .isInstanceOfSatisfying(StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
            assertThatThrownBy(() -> BlobStreams.read(stub::readBlob, d, data.length - 1, data.length, new ByteArrayOutputStream(),
                    n -> { })).hasMessageContaining("the sender has " + data.length + " bytes, expected " + (data.length - 1));
            assertThatThrownBy(() -> BlobStreams.read(stub::readBlob, d, -1, 100, new ByteArrayOutputStream(), n -> { }))
                    .hasMessageContaining("more than the 100 allowed");
        } finally {
            channel.shutdownNow();
            server.shutdownNow();
            sync.shutdown();
        }
        // without a tunnel identity (not over a cluster's tunnel) nothing is served
        String other = UUID.randomUUID().toString();
        Server bare = InProcessServerBuilder.forName(other).addService(new SyncServiceImpl(registry, watches, store)).build().start();
        ManagedChannel ch = InProcessChannelBuilder.forName(other).build();
        try {
            assertThatThrownBy(() -> SyncServiceGrpc.newBlockingStub(ch).readBlob(BlobRef.newBuilder().setDigest(d).build()).next())
                    .isInstanceOfSatisfying(StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED));
        } finally {
            ch.shutdownNow();
            bare.shutdownNow();
        }
    }

    private static String put(BlobStore store, String content) throws IOException {
        byte[] data = content.getBytes(StandardCharsets.UTF_8);
        String d = digest(data);
        store.put(d, data.length, o -> o.write(data));
        return d;
    }

    private void assertTmpEmpty() throws IOException {
        try (Stream<Path> s = Files.list(dir.resolve("tmp"))) {
            assertThat(s.toList()).isEmpty();
        }
    }
}
