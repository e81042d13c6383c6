package io.agentbox.worker.image.registry;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bearer and Basic challenges, token reuse and expiry, refused credentials, redirects to another host. */
class RegistryAuthTest {
    private static final Platform AMD64 = new Platform("linux", "amd64", null);
    private static LocalRegistry registry;
    private static RegistryPush.Pushed image;
    private static byte[] layer;
    private FaultyRegistryFront front;
    private ImageReference ref;

    @TempDir
    Path tmp;

    @BeforeAll
    static void startRegistry() throws Exception {
        registry = LocalRegistry.start();
        layer = RegistryClientTest.bytes(200_000, 11);
        image = new RegistryPush(registry).push("private/app", "v1", List.of(layer),
                RegistryPush.config("linux", "amd64"), ManifestKind.OCI);
    }

    @AfterAll
    static void stopRegistry() {
        registry.close();
    }

    @BeforeEach
    void startFront() throws Exception {
        front = FaultyRegistryFront.start(registry);
        ref = ImageReference.parse(front.hostPort() + "/private/app:v1");
    }

    @AfterEach
    void stopFront() throws Exception {
        front.close();
    }

    private RegistryClient client(String user, String password) {
        RegistryConfig c = RegistryConfig.defaults().withInsecure(Set.of(front.hostPort())).withPlatform(AMD64);
        if (user != null) {
            c = c.withCredentials(Map.of(front.hostPort(), new RegistryConfig.Credentials(user, password)));
        }
        return new RegistryClient(c);
    }

    private List<Seen> registryRequests() {
        return front.seen().stream().filter(s -> s.listener().equals("front") && s.path().startsWith("/v2/")).toList();
    }

    @Test
    void bearerTokenIsFetchedOnceAndReused() throws Exception {
        front.requireBearer("alice", "s3cret", Duration.ofSeconds(60));
        try (RegistryClient c = client("alice", "s3cret")) {
            assertEquals(image.digest(), c.resolve(ref).manifestDigest());
            assertEquals(image.digest(), c.resolve(ref).manifestDigest());
            Path out = tmp.resolve("layer");
            c.fetchBlob(ref, image.layers().get(0), out, n -> { });
            assertArrayEquals(layer, Files.readAllBytes(out));
        }
        assertEquals(1, front.tokenRequests());
        List<Seen> seen = registryRequests();
        assertFalse(seen.get(0).authorization(), "the first request goes out bare and is challenged");
        assertTrue(seen.subList(1, seen.size()).stream().allMatch(Seen::authorization), seen.toString());
        // 1 challenged + (manifest, config) x 2 + 1 blob: no second challenge round
        assertEquals(6, seen.size(), seen.toString());
    }

    @Test
    void expiredTokenIsReplacedBeforeUse() throws Exception {
        front.requireBearer("alice", "s3cret", Duration.ofSeconds(1));
        try (RegistryClient c = client("alice", "s3cret")) {
            c.resolve(ref);
            assertEquals(1, front.tokenRequests());
            Thread.sleep(1100);
            c.resolve(ref);
        }
        assertEquals(2, front.tokenRequests());
        assertEquals(1, registryRequests().stream().filter(s -> !s.authorization()).count(), "no second 401 round");
    }

    @Test
    void tokenRefusedBeforeItsTimeIsFetchedAgain() throws Exception {
        front.requireBearer(null, null, Duration.ofSeconds(60));
        front.enforceTokenLifetime(Duration.ofMillis(500));
        front.tokenField("access_token");
        try (RegistryClient c = client(null, null)) {
            c.resolve(ref);
            Thread.sleep(600);
            assertEquals(image.digest(), c.resolve(ref).manifestDigest());
        }
        assertEquals(2, front.tokenRequests());
    }

    @Test
    void basicAuthSendsConfiguredCredentials() throws Exception {
        front.requireBasic("bob", "pw");
        try (RegistryClient c = client("bob", "pw")) {
            c.resolve(ref);
            c.fetchBlob(ref, image.layers().get(0), tmp.resolve("l"), n -> { });
        }
        List<Seen> seen = registryRequests();
        assertFalse(seen.get(0).authorization());
        assertTrue(seen.subList(1, seen.size()).stream().allMatch(Seen::authorization), seen.toString());
        assertEquals(0, front.tokenRequests());
    }

    @Test
    void wrongBearerCredentialsSayUnauthorized() throws Exception {
        front.requireBearer("alice", "s3cret", Duration.ofSeconds(60));
        try (RegistryClient c = client("alice", "wrong")) {
            RegistryUnauthorizedException e = assertThrows(RegistryUnauthorizedException.class, () -> c.resolve(ref));
            assertTrue(e.getMessage().startsWith("image " + ref + ": unauthorized at " + front.hostPort()
                    + " (token service http://" + front.hostPort() + "/token refused the credentials of user 'alice', 401)"),
                    e.getMessage());
        }
    }

    @Test
    void wrongOrMissingBasicCredentialsSayUnauthorized() throws Exception {
        front.requireBasic("bob", "pw");
        try (RegistryClient c = client("bob", "nope")) {
            RegistryUnauthorizedException e = assertThrows(RegistryUnauthorizedException.class, () -> c.resolve(ref));
            assertEquals("image " + ref + ": unauthorized at " + front.hostPort() + " (the registry refused the password of user 'bob')",
                    e.getMessage());
        }
        try (RegistryClient c = client(null, null)) {
            RegistryUnauthorizedException e = assertThrows(RegistryUnauthorizedException.class, () -> c.resolve(ref));
            assertEquals("image " + ref + ": unauthorized at " + front.hostPort()
                    + " (the registry asks for a username and password and none are configured for it)", e.getMessage());
        }
    }

    @Test
    void redirectToAnotherHostCarriesNoAuthorization() throws Exception {
        front.requireBearer("alice", "s3cret", Duration.ofSeconds(60));
        front.redirectBlobs(true);
        Descriptor blob = image.layers().get(0);
        Path out = tmp.resolve("blob");
        try (RegistryClient c = client("alice", "s3cret")) {
            c.resolve(ref); // the config blob goes through the redirect too
            c.fetchBlob(ref, blob, out, n -> { });
        }
        assertArrayEquals(layer, Files.readAllBytes(out));
        List<Seen> atCdn = front.seen().stream().filter(s -> s.listener().equals("cdn")).toList();
        assertEquals(2, atCdn.size(), front.seen().toString());
        assertTrue(atCdn.stream().noneMatch(Seen::authorization), atCdn.toString());
        assertTrue(registryRequests().stream().filter(s -> s.path().contains("/blobs/")).allMatch(Seen::authorization));
    }
}
