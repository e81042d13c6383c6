package io.agentbox.worker.image.pull;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.protocol.image.ImageReference;
import io.agentbox.protocol.v1.ConfigEntry;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.image.ImageState;
import io.agentbox.worker.image.Preparation;
import io.agentbox.worker.image.RegistryAuth;
import io.agentbox.worker.image.RegistryCredentials;
import io.agentbox.worker.image.RegistrySettings;
import io.agentbox.worker.image.SandboxImage;
import io.agentbox.worker.image.TestImages;
import io.agentbox.worker.image.store.ImageStore;
import io.agentbox.worker.image.testing.FaultyRegistryFront;
import io.agentbox.worker.image.testing.LocalRegistry;
import io.agentbox.worker.image.testing.RegistryPush;
import io.agentbox.worker.image.testing.RegistryPush.ManifestKind;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Template images prepared from a real docker-registry on loopback into a real image store. */
class StoreTemplateImagesTest {
    static LocalRegistry registry;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() throws Exception {
        registry = LocalRegistry.start();
        RegistryPush push = new RegistryPush(registry);
        TestImages.Image multi = TestImages.multiLayer("x");
        push.push("team/multi", "v1", multi.layers().stream().map(TestImages.Layer::blob).toList(), multi.config(), ManifestKind.OCI);
        TestImages.Image busybox = TestImages.busybox("y");
        push.push("team/busybox", "v1", busybox.layers().stream().map(TestImages.Layer::blob).toList(), busybox.config(),
                ManifestKind.OCI);
    }

    @AfterAll
    static void stop() {
        if (registry != null) {
            registry.close();
        }
    }

    private static Template template(String image) {
        return Template.newBuilder().setName("t").setImage(image.isEmpty() ? "" : ImageReference.parse(image).toString()).build();
    }

    /** Released images collected at once (the production grace is a day: no sandbox outlives it). */
    private StoreTemplateImages images(RegistryCredentials credentials) throws Exception {
        return new StoreTemplateImages(ImageStore.open(dir), RegistrySettings.of(List.of(registry.hostPort())), credentials,
                Duration.ZERO);
    }

    @Test
    void aTemplateWithoutImageIsReadyWithTheBuiltInRoot() throws Exception {
        try (StoreTemplateImages images = images(new RegistryCredentials())) {
            Preparation p = images.prepare(template(""));
            assertThat(p.state().isReady()).isTrue();
            assertThat(p.result().get()).isEmpty();
        }
    }

    @Test
    void pullsOnceForTwoTemplatesThenServesFromTheStoreAndCollectsWhenReleased() throws Exception {
        String ref = registry.hostPort() + "/team/multi:v1";
        try (StoreTemplateImages images = images(new RegistryCredentials())) {
            Preparation a = images.prepare(template(ref));
            Preparation b = images.prepare(template(ref));
            Optional<SandboxImage> image = a.result().get(60, TimeUnit.SECONDS);
            assertThat(image).isPresent();
            assertThat(image.get().layers()).hasSize(TestImages.multiLayer("x").layers().size());
            assertThat(b.result().get(60, TimeUnit.SECONDS).get().layers()).isEqualTo(image.get().layers());
            assertThat(a.state()).isEqualTo(ImageState.READY);
            assertThat(images.store().layersUnpacked()).isEqualTo(image.get().layers().size());

            // in the store now: a new preparation is ready without unpacking again
            Preparation c = images.prepare(template(ref));
            assertThat(c.result().get(60, TimeUnit.SECONDS)).isPresent();
            assertThat(images.store().layersUnpacked()).isEqualTo(image.get().layers().size());

            a.cancel();
            b.cancel();
            assertThat(images.store().find(ImageReference.parse(ref).toString())).isPresent();
            c.cancel();
            Awaitility.await().atMost(Duration.ofSeconds(20))
                    .until(() -> images.store().find(ImageReference.parse(ref).toString()).isEmpty());
            assertThat(images.store().list()).isEmpty();
        }
    }

    @Test
    void aReleasedImageOutlivesItsTemplateForTheGraceAndAWorkerThatStopsKeepsIt() throws Exception {
        String ref = ImageReference.parse(registry.hostPort() + "/team/multi:v1").toString();
        try (StoreTemplateImages images = new StoreTemplateImages(ImageStore.open(dir),
                RegistrySettings.of(List.of(registry.hostPort())), new RegistryCredentials())) {
            Preparation p = images.prepare(template(ref));
            assertThat(p.result().get(60, TimeUnit.SECONDS)).isPresent();
            p.cancel(); // the template went away; sandboxes claimed from it may run up to a day
            Thread.sleep(500);
            assertThat(images.store().find(ref)).isPresent();
        }
        // the worker stopped (close) before the grace ended: a new one finds the image without a pull
        assertThat(ImageStore.open(dir).find(ref)).isPresent();
    }

    @Test
    void aMissingImageEndsInErrorNamingTheImage() throws Exception {
        String ref = ImageReference.parse(registry.hostPort() + "/team/absent:v1").toString();
        try (StoreTemplateImages images = images(new RegistryCredentials())) {
            Preparation p = images.prepare(template(ref));
            assertThatThrownBy(() -> p.result().get(60, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .hasMessageContaining(ref);
            assertThat(p.state().status()).isEqualTo("error");
            assertThat(p.state().message()).contains(ref).contains("not found");
        }
    }

    @Test
    void credentialsPushedFromTheHubAreUsedForThePull() throws Exception {
        try (FaultyRegistryFront front = FaultyRegistryFront.start(registry)) {
            front.requireBasic("puller", "s3cret");
            String ref = ImageReference.parse(front.hostPort() + "/team/busybox:v1").toString();
            RegistryCredentials credentials = new RegistryCredentials();
            try (StoreTemplateImages images = new StoreTemplateImages(ImageStore.open(dir),
                    RegistrySettings.of(List.of(front.hostPort())), credentials)) {
                Preparation refused = images.prepare(template(ref));
                assertThatThrownBy(() -> refused.result().get(60, TimeUnit.SECONDS)).hasMessageContaining("unauthorized");
                refused.cancel();

                credentials.apply(List.of(ConfigEntry.newBuilder().setKey(RegistryCredentials.ENTRY_PREFIX + front.hostPort())
                        .setValue(new RegistryAuth("puller", "s3cret").toSettingValue()).build()));
                Preparation ok = images.prepare(template(ref));
                assertThat(ok.result().get(60, TimeUnit.SECONDS)).isPresent();
            }
        }
    }
}
