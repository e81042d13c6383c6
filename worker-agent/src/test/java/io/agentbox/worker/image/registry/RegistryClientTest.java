package io.agentbox.worker.image.registry;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.agentbox.protocol.image.ImageReference;
import io.agentbox.worker.image.ResolvedImage;
import io.agentbox.worker.image.testing.FaultyRegistryFront;
import io.agentbox.worker.image.testing.LocalRegistry;
import io.agentbox.worker.image.testing.RegistryPush;
import io.agentbox.worker.image.testing.RegistryPush.IndexKind;
import io.agentbox.worker.image.testing.RegistryPush.ManifestKind;
import io.agentbox.worker.image.testing.RegistryPush.PlatformImage;
import java.net.ServerSocket;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Resolving tags and digests against Debian's docker-registry, directly and through the faulty front. */
class RegistryClientTest {
    private static final Platform AMD64 = new Platform("linux", "amd64", null);
    private static LocalRegistry registry;
    private static RegistryPush push;
    private FaultyRegistryFront front;
    private RegistryClient client;

    @BeforeAll
    static void startRegistry() throws Exception {
        registry = LocalRegistry.start();
        push = new RegistryPush(registry);
    }

    @AfterAll
    static void stopRegistry() {
        registry.close();
    }

    @BeforeEach
    void startFront() throws Exception {
        front = FaultyRegistryFront.start(registry);
        client = new RegistryClient(config(AMD64));
    }

    @AfterEach
    void stopFront() throws Exception {
        client.close();
        front.close();
    }

    private RegistryConfig config(Platform platform) {
        return RegistryConfig.defaults().withInsecure(Set.of(registry.hostPort(), front.hostPort())).withPlatform(platform);
    }

    static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private RegistryPush.PushedIndex twoPlatforms(String repo, IndexKind index, ManifestKind manifests) throws Exception {
        return push.pushIndex(repo, "latest", index, List.of(
                new PlatformImage("linux", "arm64", "v8", List.of(bytes(300, 1), bytes(200, 2)),
                        RegistryPush.config("linux", "arm64", "ARCH=arm64"), manifests),
                new PlatformImage("linux", "amd64", null, List.of(bytes(400, 3)),
                        RegistryPush.config("linux", "amd64", "ARCH=amd64"), manifests)));
    }

    private static void assertIs(RegistryPush.Pushed expected, ResolvedImage got) {
        assertEquals(expected.digest(), got.manifestDigest());
        assertEquals(expected.digest(), got.reference().digest());
        assertEquals(expected.config(), got.config());
        assertEquals(expected.layers(), got.layers());
    }

    @Test
    void ociIndexResolvesToThisPlatformsManifest() throws Exception {
        RegistryPush.PushedIndex pushed = twoPlatforms("multi/oci", IndexKind.OCI, ManifestKind.OCI);
        ImageReference ref = ImageReference.parse(registry.hostPort() + "/multi/oci:latest");

        ResolvedImage amd = client.resolve(ref);
        assertIs(pushed.manifests().get(1), amd);
        assertTrue(new String(amd.configJson()).contains("ARCH=amd64"));
        assertEquals("latest", amd.reference().tag());

        try (RegistryClient arm = new RegistryClient(config(new Platform("linux", "arm64", "v8")))) {
            assertIs(pushed.manifests().get(0), arm.resolve(ref));
        }
        try (RegistryClient s390 = new RegistryClient(config(new Platform("linux", "s390x", null)))) {
            UnsupportedManifestException e = assertThrows(UnsupportedManifestException.class, () -> s390.resolve(ref));
            assertEquals("image " + ref + ": no image for linux/s390x (the image has linux/arm64/v8, linux/amd64)", e.getMessage());
        }
    }

    @Test
    void dockerManifestListResolves() throws Exception {
        RegistryPush.PushedIndex pushed = twoPlatforms("multi/docker", IndexKind.DOCKER_LIST, ManifestKind.DOCKER_V2S2);
        ResolvedImage got = client.resolve(ImageReference.parse(registry.hostPort() + "/multi/docker"));
        assertIs(pushed.manifests().get(1), got);
        assertEquals(RegistryPush.DOCKER_CONFIG, got.config().mediaType());
    }

    @Test
    void singleDockerSchema2ManifestResolves() throws Exception {
        byte[] zstdLayer = bytes(1000, 4);
        System.arraycopy(new byte[] {0x28, (byte) 0xb5, 0x2f, (byte) 0xfd}, 0, zstdLayer, 0, 4);
        RegistryPush.Pushed pushed = push.push("single/docker", "v1", List.of(zstdLayer),
                RegistryPush.config("linux", "amd64"), ManifestKind.DOCKER_V2S2);
        ResolvedImage got = client.resolve(ImageReference.parse(registry.hostPort() + "/single/docker:v1"));
        assertIs(pushed, got);
        assertEquals("application/vnd.oci.image.layer.v1.tar+zstd", got.layers().get(0).mediaType());
    }

    @Test
    void ociWithoutMediaTypesIsReadByStructure() throws Exception {
        RegistryPush.PushedIndex pushed = twoPlatforms("umoci/style", IndexKind.OCI_WITHOUT_MEDIA_TYPE,
                ManifestKind.OCI_WITHOUT_MEDIA_TYPE);
        assertTrue(!new String(pushed.index()).contains("mediaType"));
        ImageReference direct = ImageReference.parse(registry.hostPort() + "/umoci/style");
        assertIs(pushed.manifests().get(1), client.resolve(direct));
        assertEquals("", client.resolve(direct).layers().get(0).mediaType());

        // neither the body nor the Content-Type says what it is: the structure decides
        front.manifestContentType("application/octet-stream");
        assertIs(pushed.manifests().get(1), client.resolve(ImageReference.parse(front.hostPort() + "/umoci/style")));
    }

    @Test
    void digestPinnedPullIsVerified() throws Exception {
        RegistryPush.PushedIndex pushed = twoPlatforms("pinned/app", IndexKind.OCI, ManifestKind.OCI);

        ImageReference byIndex = ImageReference.parse(registry.hostPort() + "/pinned/app@" + pushed.digest());
        ResolvedImage got = client.resolve(byIndex);
        assertIs(pushed.manifests().get(1), got);
        assertEquals(pushed.manifests().get(1).digest(), got.reference().digest());

        ImageReference byManifest = ImageReference.parse(registry.hostPort() + "/pinned/app@" + pushed.manifests().get(1).digest());
        assertIs(pushed.manifests().get(1), client.resolve(byManifest));

        // a registry that answers a digest with other bytes is caught
        push.pushIndex("pinned/app", "decoy", IndexKind.OCI, List.of());
        front.substituteManifest(pushed.digest(), "decoy");
        ImageReference lied = ImageReference.parse(front.hostPort() + "/pinned/app@" + pushed.digest());
        DigestMismatchException e = assertThrows(DigestMismatchException.class, () -> client.resolve(lied));
        assertTrue(e.getMessage().startsWith("image " + lied + ": manifest"), e.getMessage());

        // a digest the registry does not have
        ImageReference unknown = ImageReference.parse(registry.hostPort() + "/pinned/app@sha256:" + "0".repeat(64));
        ImageNotFoundException nf = assertThrows(ImageNotFoundException.class, () -> client.resolve(unknown));
        assertEquals("image " + unknown + ": not found (registry answered 404 MANIFEST_UNKNOWN)", nf.getMessage());
    }

    @Test
    void missingImageSaysNotFound() throws Exception {
        ImageReference missing = ImageReference.parse(registry.hostPort() + "/missing:latest");
        ImageNotFoundException e = assertThrows(ImageNotFoundException.class, () -> client.resolve(missing));
        assertEquals("image " + registry.hostPort() + "/missing:latest: not found (registry answered 404 MANIFEST_UNKNOWN)",
                e.getMessage());

        push.push("present", "v1", List.of(bytes(10, 5)), RegistryPush.config("linux", "amd64"), ManifestKind.OCI);
        ImageReference noTag = ImageReference.parse(registry.hostPort() + "/present:v2");
        e = assertThrows(ImageNotFoundException.class, () -> client.resolve(noTag));
        assertEquals("image " + registry.hostPort() + "/present:v2: not found (registry answered 404 MANIFEST_UNKNOWN)",
                e.getMessage());
    }

    @Test
    void schema1IsRefusedClearly() throws Exception {
        push.push("old/schema", "v1", List.of(bytes(10, 6)), RegistryPush.config("linux", "amd64"), ManifestKind.DOCKER_V2S2);
        front.manifestContentType("application/vnd.docker.distribution.manifest.v1+prettyjws");
        ImageReference ref = ImageReference.parse(front.hostPort() + "/old/schema:v1");
        UnsupportedManifestException e = assertThrows(UnsupportedManifestException.class, () -> client.resolve(ref));
        assertTrue(e.getMessage().startsWith("image " + ref + ": Docker image manifest schema 1 is deprecated and not supported"),
                e.getMessage());
    }

    @Test
    void limitsAndCorruptConfigAreRefused() throws Exception {
        RegistryPush.Pushed pushed = push.push("limits/app", "v1", List.of(bytes(10, 7)),
                RegistryPush.config("linux", "amd64", "A=1"), ManifestKind.OCI);
        ImageReference ref = ImageReference.parse(front.hostPort() + "/limits/app:v1");
        RegistryConfig.Limits d = RegistryConfig.Limits.DEFAULT;
        try (RegistryClient small = new RegistryClient(config(AMD64).withLimits(
                new RegistryConfig.Limits(100, d.maxConfigBytes(), d.maxAttempts(), d.maxBlobDownloadsPerRegistry(), d.maxBackoff())))) {
            UnsupportedManifestException e = assertThrows(UnsupportedManifestException.class, () -> small.resolve(ref));
            assertEquals("image " + ref + ": manifest is larger than the limit of 100 bytes", e.getMessage());
        }
        try (RegistryClient small = new RegistryClient(config(AMD64).withLimits(
                new RegistryConfig.Limits(d.maxManifestBytes(), 10, d.maxAttempts(), d.maxBlobDownloadsPerRegistry(), d.maxBackoff())))) {
            UnsupportedManifestException e = assertThrows(UnsupportedManifestException.class, () -> small.resolve(ref));
            assertTrue(e.getMessage().contains("config blob is " + pushed.config().size() + " bytes, more than the limit of 10"),
                    e.getMessage());
        }
        front.corruptBlob(pushed.config().digest());
        DigestMismatchException e = assertThrows(DigestMismatchException.class, () -> client.resolve(ref));
        assertTrue(e.getMessage().startsWith("image " + ref + ": config blob " + pushed.config().digest() + ": digest mismatch, got sha256:"),
                e.getMessage());
    }

    @Test
    void plainHttpRegistryNotConfiguredInsecureFailsOverHttps() throws Exception {
        try (RegistryClient strict = new RegistryClient(RegistryConfig.defaults().withPlatform(AMD64))) {
            ImageReference ref = ImageReference.parse(front.hostPort() + "/any:latest");
            RegistryUnreachableException e = assertThrows(RegistryUnreachableException.class, () -> strict.resolve(ref));
            assertTrue(e.getMessage().startsWith("image " + ref + ": registry " + front.hostPort() + " unreachable: "), e.getMessage());
            assertTrue(e.getMessage().contains("TLS failed on https://" + front.hostPort()), e.getMessage());
            assertTrue(e.getMessage().contains("configure it as an insecure registry"), e.getMessage());
        }
    }

    @Test
    void unreachableRegistryIsNamed() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        String hostPort = "127.0.0.1:" + port;
        try (RegistryClient c = new RegistryClient(RegistryConfig.defaults().withInsecure(Set.of(hostPort)))) {
            ImageReference ref = ImageReference.parse(hostPort + "/app:latest");
            RegistryUnreachableException e = assertThrows(RegistryUnreachableException.class, () -> c.resolve(ref));
            assertEquals("image " + ref + ": registry " + hostPort + " unreachable: Connection refused", e.getMessage());
        }
    }
}
