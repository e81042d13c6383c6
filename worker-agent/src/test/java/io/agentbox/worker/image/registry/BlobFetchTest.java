package io.agentbox.worker.image.registry;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.agentbox.protocol.image.ImageReference;
import io.agentbox.worker.image.Descriptor;
import io.agentbox.worker.image.testing.FaultyRegistryFront;
import io.agentbox.worker.image.testing.FaultyRegistryFront.Seen;
import io.agentbox.worker.image.testing.LocalRegistry;
import io.agentbox.worker.image.testing.RegistryPush;
import io.agentbox.worker.image.testing.RegistryPush.ManifestKind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Blob downloads: verification on the bytes received, resume after a cut, 429 waits, no leftovers on failure. */
class BlobFetchTest {
    private static final int SIZE = 2 * 1024 * 1024 + 123;
    private static LocalRegistry registry;
    private static byte[] layer;
    private static Descriptor blob;
    private FaultyRegistryFront front;
    private RegistryClient client;
    private ImageReference ref;

    @TempDir
    Path tmp;

    @BeforeAll
    static void startRegistry() throws Exception {
        registry = LocalRegistry.start();
        layer = RegistryClientTest.bytes(SIZE, 21);
        System.arraycopy(new byte[] {0x28, (byte) 0xb5, 0x2f, (byte) 0xfd}, 0, layer, 0, 4); // a "zstd layer"
        blob = new RegistryPush(registry).push("blobs/app", "v1", List.of(layer), RegistryPush.config("linux", "amd64"),
                ManifestKind.OCI).layers().get(0);
    }

    @AfterAll
    static void stopRegistry() {
        registry.close();
    }

    @BeforeEach
    void startFront() throws Exception {
        front = FaultyRegistryFront.start(registry);
        client = new RegistryClient(RegistryConfig.defaults().withInsecure(Set.of(front.hostPort())));
        ref = ImageReference.parse(front.hostPort() + "/blobs/app:v1");
    }

    @AfterEach
    void stopFront() throws Exception {
        client.close();
        front.close();
    }

    private List<Seen> blobGets() {
        return front.seen().stream().filter(s -> s.path().endsWith("/blobs/" + blob.digest())).toList();
    }

    private void assertNoLeftovers(Path target) throws Exception {
        assertFalse(Files.exists(target), target + " exists");
        assertFalse(Files.exists(target.resolveSibling(target.getFileName() + ".partial")), "partial file left");
        try (var files = Files.list(tmp)) {
            assertEquals(List.of(), files.toList());
        }
    }

    @Test
    void blobIsWrittenVerifiedAndCounted() throws Exception {
        Path target = tmp.resolve("blob");
        AtomicLong progress = new AtomicLong();
        client.fetchBlob(ref, blob, target, progress::addAndGet);
        assertArrayEquals(layer, Files.readAllBytes(target));
        assertEquals(SIZE, progress.get());
        assertEquals(List.of(target), Files.list(tmp).toList());
        assertEquals(1, blobGets().size());
    }

    @Test
    void tooManyRequestsWaitsForRetryAfterSeconds() throws Exception {
        front.rateLimit("/blobs/", "1", 1);
        Path target = tmp.resolve("blob");
        long t0 = System.nanoTime();
        client.fetchBlob(ref, blob, target, n -> { });
        long waitedMs = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(waitedMs >= 1000, "waited only " + waitedMs + " ms");
        assertTrue(waitedMs < 1000 + 1000 + 2000, "waited " + waitedMs + " ms: more than Retry-After plus jitter");
        assertArrayEquals(layer, Files.readAllBytes(target));
        assertEquals(2, blobGets().size());
    }

    @Test
    void tooManyRequestsWaitsForRetryAfterDate() throws Exception {
        ZonedDateTime at = ZonedDateTime.now(ZoneOffset.UTC).plusSeconds(2);
        front.rateLimit("/manifests/", DateTimeFormatter.RFC_1123_DATE_TIME.format(at), 1);
        long t0 = System.nanoTime();
        client.resolve(ref);
        long waitedMs = (System.nanoTime() - t0) / 1_000_000;
        // the date has whole seconds, so the wait is between 1 and 2 s (plus jitter)
        assertTrue(waitedMs >= 900, "waited only " + waitedMs + " ms");
        assertTrue(waitedMs < 4000, "waited " + waitedMs + " ms");
    }

    @Test
    void retryAfterBeyondTheCapFailsAtOnce() throws Exception {
        front.rateLimit("/blobs/", "3600", 1);
        Path target = tmp.resolve("blob");
        RegistryException e = assertThrows(RegistryException.class, () -> client.fetchBlob(ref, blob, target, n -> { }));
        assertEquals("blob " + blob.digest() + " of image " + ref + ": registry " + front.hostPort()
                + " answered 429 and asks to retry after 3600 s, longer than the limit of 30 s", e.getMessage());
        assertEquals(429, e.status());
        assertNoLeftovers(target);
    }

    @Test
    void cutDownloadResumesWithRange() throws Exception {
        front.cutBlobOnce(blob.digest(), 0.5);
        Path target = tmp.resolve("blob");
        AtomicLong progress = new AtomicLong();
        client.fetchBlob(ref, blob, target, progress::addAndGet);
        assertArrayEquals(layer, Files.readAllBytes(target));
        List<Seen> gets = blobGets();
        assertEquals(2, gets.size(), gets.toString());
        assertNull(gets.get(0).range());
        assertEquals("bytes=" + (SIZE / 2) + "-", gets.get(1).range());
        assertEquals(SIZE, progress.get(), "each byte counted once");
    }

    @Test
    void resumeAnsweredFromTheWrongOffsetStartsOver() throws Exception {
        front.cutBlobOnce(blob.digest(), 0.5);
        front.badResumeOnce(blob.digest());
        Path target = tmp.resolve("blob");
        AtomicLong progress = new AtomicLong();
        client.fetchBlob(ref, blob, target, progress::addAndGet);
        assertArrayEquals(layer, Files.readAllBytes(target));
        List<Seen> gets = blobGets();
        assertEquals(3, gets.size(), gets.toString());
        assertEquals("bytes=" + (SIZE / 2) + "-", gets.get(1).range());
        assertNull(gets.get(2).range(), "after a 206 from byte 0 the blob starts over without Range");
        assertEquals(SIZE + SIZE / 2, progress.get(), "progress reports the half fetched twice");
    }

    @Test
    void corruptedBlobFailsAndLeavesNothing() throws Exception {
        front.corruptBlob(blob.digest());
        Path target = tmp.resolve("blob");
        DigestMismatchException e = assertThrows(DigestMismatchException.class, () -> client.fetchBlob(ref, blob, target, n -> { }));
        assertTrue(e.getMessage().startsWith("blob " + blob.digest() + " of image " + ref + ": digest mismatch, got sha256:"),
                e.getMessage());
        assertFalse(e.getMessage().endsWith(blob.digest()));
        assertNoLeftovers(target);
        assertEquals(1, blobGets().size(), "a wrong digest is not retried");
    }

    @Test
    void blobLargerThanItsDescriptorFailsAtOnce() throws Exception {
        Descriptor lying = new Descriptor(blob.mediaType(), blob.digest(), SIZE - 10);
        Path target = tmp.resolve("blob");
        DigestMismatchException e = assertThrows(DigestMismatchException.class, () -> client.fetchBlob(ref, lying, target, n -> { }));
        assertEquals("blob " + blob.digest() + " of image " + ref + ": registry sends " + SIZE + " bytes, the manifest says "
                + (SIZE - 10), e.getMessage());
        assertNoLeftovers(target);
        assertEquals(1, blobGets().size());
    }

    @Test
    void missingBlobSaysNotFound() throws Exception {
        Descriptor absent = new Descriptor("", "sha256:" + "1".repeat(64), 5);
        Path target = tmp.resolve("blob");
        ImageNotFoundException e = assertThrows(ImageNotFoundException.class, () -> client.fetchBlob(ref, absent, target, n -> { }));
        assertEquals("blob " + absent.digest() + " of image " + ref + ": not found (registry answered 404 BLOB_UNKNOWN)",
                e.getMessage());
        assertNoLeftovers(target);
    }
}
