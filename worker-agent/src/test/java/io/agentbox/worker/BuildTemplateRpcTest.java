package io.agentbox.worker;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.agentbox.protocol.v1.BuildEvent;
import io.agentbox.protocol.v1.BuildFileChunk;
import io.agentbox.protocol.v1.BuildInput;
import io.agentbox.protocol.v1.CreateSandboxRequest;
import io.agentbox.protocol.v1.Template;
import io.agentbox.protocol.v1.TemplateBuildResult;
import io.agentbox.protocol.v1.TemplateBuildSpec;
import io.agentbox.protocol.v1.TemplateBuildStep;
import io.agentbox.worker.image.LayerTar;
import io.agentbox.worker.image.RegistryCredentials;
import io.agentbox.worker.image.RegistrySettings;
import io.agentbox.worker.image.pull.StoreTemplateImages;
import io.agentbox.worker.image.store.ImageStore;
import io.agentbox.worker.image.unpack.Trees;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * BuildTemplate over gRPC against a real worker (crun sandboxes, the image store): the spec, an
 * archive in several chunks, logs as they come, the result naming the image; a template whose
 * image is that result then hands out sandboxes with the files and the start command running;
 * a failing step is a result with the step number; input out of order is INVALID_ARGUMENT.
 */
class BuildTemplateRpcTest {

    static final class Events implements StreamObserver<BuildEvent> {
        final List<BuildEvent> events = new CopyOnWriteArrayList<>();
        final CompletableFuture<Void> done = new CompletableFuture<>();

        @Override
        public void onNext(BuildEvent e) {
            events.add(e);
        }

        @Override
        public void onError(Throwable t) {
            done.completeExceptionally(t);
        }

        @Override
        public void onCompleted() {
            done.complete(null);
        }

        TemplateBuildResult result() {
            done.orTimeout(120, TimeUnit.SECONDS).join();
            BuildEvent last = events.get(events.size() - 1);
            assertThat(last.hasResult()).as("the last event is the result").isTrue();
            return last.getResult();
        }

        List<String> logs() {
            return events.stream().filter(BuildEvent::hasLog).map(e -> e.getLog().getStep() + "|" + e.getLog().getMessage()).toList();
        }
    }

    static TemplateBuildStep step(String type, String... args) {
        return TemplateBuildStep.newBuilder().setType(type).addAllArgs(Arrays.asList(args)).build();
    }

    @Test
    void aBuildOverTheTunnelBecomesATemplateWhoseSandboxesHaveItsFilesAndStartCommand() throws Exception {
        Path storeDir = Files.createTempDirectory(Path.of("/var/tmp"), "agentbox-rpc-store-");
        StoreTemplateImages images = new StoreTemplateImages(ImageStore.open(storeDir), RegistrySettings.DEFAULT,
                new RegistryCredentials());
        try (WorkerFixture w = new WorkerFixture(List.of(), images)) {
            byte[] archive = new LayerTar().dir("site").file("site/index.html", "x".repeat(3 << 20) + "\n", 0644, 0, 0)
                    .file("site/hello.txt", "hello\n", 0644, 0, 0).gzip();
            String hash = LayerTar.sha256(archive).substring(7);
            String ref = "builds.agentbox.internal/rpc:b1";
            TemplateBuildSpec spec = TemplateBuildSpec.newBuilder().setBuildId("b1").setImageReference(ref).setFromTemplate(true)
                    .addSteps(step("RUN", "echo building; id -un; touch /home/user/mark"))
                    .addSteps(step("COPY", "site", "/srv/site/", "", "").toBuilder().setFilesHash(hash))
                    .addSteps(step("WORKDIR", "/srv/site"))
                    .setStartCmd("echo started > /tmp/started; exec sleep 1000").setReadyCmd("[ -f /tmp/started ]")
                    .setMemoryMb(512).build();
            Events events = new Events();
            StreamObserver<BuildInput> in = w.builds.buildTemplate(events);
            in.onNext(BuildInput.newBuilder().setSpec(spec).build());
            for (int off = 0; off < archive.length; off += 1 << 20) {
                int len = Math.min(1 << 20, archive.length - off);
                in.onNext(BuildInput.newBuilder().setFile(BuildFileChunk.newBuilder().setFilesHash(hash)
                        .setData(ByteString.copyFrom(archive, off, len)).setLast(off + len == archive.length)).build());
            }
            in.onNext(BuildInput.newBuilder().setFilesDone(true).build());
            in.onCompleted();
            TemplateBuildResult r = events.result();
            assertThat(r.getOk()).as(r.getErrorMessage()).isTrue();
            assertThat(r.getImageReference()).isEqualTo(ref);
            assertThat(r.getWorkdir()).isEqualTo("/srv/site");
            assertThat(r.getUser()).isEqualTo("user");
            assertThat(r.getLayersCount()).as("RUN and COPY changed files; the WORKDIR existed").isEqualTo(2);
            assertThat(events.logs()).contains("1|[builder 1/3] RUN echo building; id -un; touch /home/user/mark", "1|building", "1|user",
                    "2|[builder 2/3] COPY site /srv/site/");
            assertThat(Files.list(w.dataDir.resolve("builds/uploads")).count()).as("spooled archives removed").isZero();

            w.host.applyTemplates(List.of(Template.newBuilder(WorkerFixture.template("built", 1)).setImage(ref).build()));
            Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> w.host.pools().capacity().stream()
                    .anyMatch(p -> p.getTemplate().equals("built") && p.getIdle() == 1));
            String id = w.sandboxes.createSandbox(CreateSandboxRequest.newBuilder().setTemplate("built").setOwner("t").build())
                    .getSandboxId();
            assertThat(w.run(id, "cat /tmp/started /srv/site/hello.txt; stat -c %U /srv/site/index.html; pgrep -f 'sleep 1000' >/dev/null && echo running")
                    .stdout()).isEqualTo("started\nhello\nuser\nrunning\n");
        } finally {
            images.close();
            Trees.deleteRecursively(storeDir);
        }
    }

    @Test
    void aFailingStepIsAResultWithItsNumberAndInputOutOfOrderIsInvalid() throws Exception {
        Path storeDir = Files.createTempDirectory(Path.of("/var/tmp"), "agentbox-rpc-store-");
        StoreTemplateImages images = new StoreTemplateImages(ImageStore.open(storeDir), RegistrySettings.DEFAULT,
                new RegistryCredentials());
        try (WorkerFixture w = new WorkerFixture(List.of(), images)) {
            Events events = new Events();
            StreamObserver<BuildInput> in = w.builds.buildTemplate(events);
            in.onNext(BuildInput.newBuilder().setSpec(TemplateBuildSpec.newBuilder().setBuildId("b2").setFromTemplate(true)
                    .setImageReference("builds.agentbox.internal/rpc:b2").addSteps(step("RUN", "echo ok"))
                    .addSteps(step("RUN", "exit 7"))).build());
            in.onNext(BuildInput.newBuilder().setFilesDone(true).build());
            in.onCompleted();
            TemplateBuildResult r = events.result();
            assertThat(r.getOk()).isFalse();
            assertThat(r.getErrorStep()).isEqualTo("2");
            assertThat(r.getErrorMessage()).isEqualTo("failed to run command 'exit 7': exit status 7");

            Events bad = new Events();
            StreamObserver<BuildInput> in2 = w.builds.buildTemplate(bad);
            in2.onNext(BuildInput.newBuilder().setFile(BuildFileChunk.newBuilder().setFilesHash("a".repeat(64))).build());
            assertThat(bad.done).failsWithin(Duration.ofSeconds(10)).withThrowableOfType(java.util.concurrent.ExecutionException.class)
                    .satisfies(e -> {
                        Status s = ((StatusRuntimeException) e.getCause()).getStatus();
                        assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                        assertThat(s.getDescription()).isEqualTo("file chunks before the spec");
                    });
        } finally {
            images.close();
            Trees.deleteRecursively(storeDir);
        }
    }
}
