package io.agentbox.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;


import io.agentbox.protocol.image.ImageReference;
import io.agentbox.protocol.v1.CreateSandboxRequest;
import io.agentbox.protocol.v1.ExecStart;
import io.agentbox.protocol.v1.PoolCapacity;
import io.agentbox.protocol.v1.ProcessConfig;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.image.ControlledImages;
import io.agentbox.worker.image.SandboxImage;
import io.agentbox.worker.image.TestImages;
import io.agentbox.worker.image.store.ImageStore;
import io.agentbox.worker.image.store.StoredImage;
import io.agentbox.worker.image.unpack.Trees;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Pools of templates with an image, on the real local runtime (crun containers): nothing
 * starts until the image is prepared, the state (pulling with progress, error with the message)
 * is what the capacity report carries, claims meanwhile fail with that message, a failed
 * preparation is retried after its pause, and a new image drains the pool and prepares again.
 * The image preparation is {@link ControlledImages}, driven by the test (the image store is
 * built on another branch).
 */
class TemplateImagePoolTest {
    private static final Duration T = Duration.ofSeconds(30);

    private static Template template(String name, String image, int poolSize) {
        return Template.newBuilder(WorkerFixture.template(name, poolSize)).setImage(image).build();
    }

    private static PoolCapacity pool(WorkerFixture w, String name) {
        return w.host.capacity().stream().filter(p -> p.getTemplate().equals(name)).findFirst().orElseThrow();
    }

    private static long sandboxDirs(WorkerFixture w) throws IOException {
        Path dir = w.dataDir.resolve("sandboxes");
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.count();
        }
    }

    private static StatusRuntimeException claimFails(WorkerFixture w, String template) {
        try {
            w.sandboxes.createSandbox(CreateSandboxRequest.newBuilder().setTemplate(template).setOwner("t").build());
        } catch (StatusRuntimeException e) {
            return e;
        }
        throw new AssertionError("the claim of " + template + " succeeded");
    }

    @Test
    void aPullingImageStartsNothingAndReportsProgressThenReadyFillsThePool() throws Exception {
        ControlledImages images = new ControlledImages();
        try (WorkerFixture w = new WorkerFixture(List.of(), images, template("py", "docker.io/library/python:3.12", 2))) {
            Awaitility.await().atMost(T).until(() -> images.prepared().size() == 1);
            assertThat(images.last().image).isEqualTo("docker.io/library/python:3.12");
            PoolCapacity pulling = pool(w, "py");
            assertThat(pulling.getStatus()).isEqualTo("pulling");
            assertThat(pulling.getIdle()).isZero();

            images.last().progress("3/7 layers, 412/1630 MB");
            assertThat(pool(w, "py").getStatusMessage()).isEqualTo("3/7 layers, 412/1630 MB");
            String expected = "template 'py' is not ready: pulling docker.io/library/python:3.12 on cluster test: "
                    + "3/7 layers, 412/1630 MB";
            StatusRuntimeException e = claimFails(w, "py");
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(e.getStatus().getDescription()).isEqualTo(expected);
            assertThat(w.host.pools().notReady("py")).isEqualTo(expected);
            Thread.sleep(300); // a refill would have started sandboxes by now
            assertThat(sandboxDirs(w)).as("no sandbox of a pulling template").isZero();
            assertThat(pool(w, "py").getIdle()).isZero();

            images.last().ready(Optional.empty()); // the double's "image" is the built-in root: the runtime can run it
            Awaitility.await().atMost(T).until(() -> pool(w, "py").getIdle() == 2);
            assertThat(pool(w, "py").getStatus()).isEqualTo("ready");
            assertThat(pool(w, "py").getStatusMessage()).isEmpty();
            assertThat(w.host.pools().notReady("py")).isNull();
            String id = w.sandboxes.createSandbox(CreateSandboxRequest.newBuilder().setTemplate("py").setOwner("t").build())
                    .getSandboxId();
            assertThat(w.run(id, "echo ok").stdout()).isEqualTo("ok\n");
            assertThat(images.prepared()).hasSize(1);
        }
    }

    @Test
    void aFailedPreparationIsReportedWithItsMessageAndRetriedAfterAPause() throws Exception {
        ControlledImages images = new ControlledImages();
        try (WorkerFixture w = new WorkerFixture(List.of(), images, template("app", "r.example/app:1", 1))) {
            Awaitility.await().atMost(T).until(() -> images.prepared().size() == 1);
            long failedAt = System.nanoTime();
            images.last().fail("image r.example/app:1: manifest unknown (404 from r.example)");
            PoolCapacity error = pool(w, "app");
            assertThat(error.getStatus()).isEqualTo("error");
            assertThat(error.getStatusMessage()).startsWith("image r.example/app:1: manifest unknown (404 from r.example)")
                    .containsPattern("\\(trying again in [45] s\\)$");
            assertThat(claimFails(w, "app").getStatus().getDescription()).startsWith(
                    "template 'app' is not ready: error on cluster test: image r.example/app:1: manifest unknown");

            Awaitility.await().atMost(T).until(() -> images.prepared().size() == 2);
            assertThat(Duration.ofNanos(System.nanoTime() - failedAt)).as("first retry after 5 s")
                    .isBetween(Duration.ofMillis(4500), Duration.ofSeconds(10));
            assertThat(pool(w, "app").getStatus()).isEqualTo("pulling");
            assertThat(sandboxDirs(w)).isZero();
            images.last().ready(Optional.empty());
            Awaitility.await().atMost(T).until(() -> pool(w, "app").getIdle() == 1);
            assertThat(pool(w, "app").getStatus()).isEqualTo("ready");
        }
    }

    @Test
    void aNewImageDrainsThePoolCancelsTheOldPreparationAndPreparesAgain() throws Exception {
        ControlledImages images = new ControlledImages();
        try (WorkerFixture w = new WorkerFixture(List.of(), images, WorkerFixture.template("base", 1))) {
            // no image: ready at once, nothing to prepare
            Awaitility.await().atMost(T).until(() -> pool(w, "base").getIdle() == 1);
            assertThat(pool(w, "base").getStatus()).isEqualTo("ready");
            assertThat(images.prepared()).isEmpty();
            String claimed = w.create();
            Awaitility.await().atMost(T).until(() -> pool(w, "base").getIdle() == 1);

            w.host.applyTemplates(List.of(template("base", "busybox:1.36", 1)));
            Awaitility.await().atMost(T).until(() -> images.prepared().size() == 1);
            Awaitility.await().atMost(T).until(() -> sandboxDirs(w) == 1); // the idle one drained, the claimed one runs
            assertThat(pool(w, "base").getStatus()).isEqualTo("pulling");
            assertThat(w.run(claimed, "echo still").stdout()).isEqualTo("still\n");

            w.host.applyTemplates(List.of(template("base", "busybox:1.37", 1)));
            Awaitility.await().atMost(T).until(() -> images.prepared().size() == 2);
            assertThat(images.prepared().get(0).cancelled()).as("the superseded preparation is cancelled").isTrue();
            images.prepared().get(0).ready(Optional.empty()); // finishing late changes nothing
            Thread.sleep(300);
            assertThat(pool(w, "base").getIdle()).isZero();
            assertThat(pool(w, "base").getStatus()).isEqualTo("pulling");

            // the prepared image goes to the runtime: sandboxes of the busybox image, not the host's root
            Path storeDir = w.dataDir.resolve("test-store");
            try {
                TestImages.Image busybox = TestImages.busybox("busybox:1.37");
                StoredImage stored = ImageStore.open(storeDir).pull(ImageReference.parse(busybox.name()),
                        TestImages.source(busybox), p -> { });
                images.last().ready(Optional.of(stored.toSandboxImage("busybox:1.37")));
                Awaitility.await().atMost(T).until(() -> pool(w, "base").getIdle() == 1);
                assertThat(pool(w, "base").getStatus()).isEqualTo("ready");
                String fromImage = w.create();
                WorkerFixture.Result r = w.run(ExecStart.newBuilder().setSandboxId(fromImage).setProcess(ProcessConfig.newBuilder()
                        .setCmd("/bin/sh").addArgs("-c").addArgs("ls /bin/busybox; test -e /usr/bin/java || echo no-host-root"))
                        .build());
                assertThat(r.stdout()).isEqualTo("/bin/busybox\nno-host-root\n");
            } finally {
                w.host.close();
                Trees.deleteRecursively(storeDir);
            }
        }
    }
}
