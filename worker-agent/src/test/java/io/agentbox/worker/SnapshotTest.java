package io.agentbox.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.protocol.ErrorReason;
import io.agentbox.protocol.image.ImageReference;
import io.agentbox.protocol.v1.CreateSandboxRequest;
import io.agentbox.protocol.v1.CreateSnapshotRequest;
import io.agentbox.protocol.v1.ExecStart;
import io.agentbox.protocol.v1.ProcessConfig;
import io.agentbox.protocol.v1.SandboxInfo;
import io.agentbox.protocol.v1.SandboxRef;
import io.agentbox.protocol.v1.SnapshotInfo;
import io.agentbox.protocol.v1.SnapshotRef;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.image.RegistryCredentials;
import io.agentbox.worker.image.RegistrySettings;
import io.agentbox.worker.image.pull.StoreTemplateImages;
import io.agentbox.worker.image.TestImages;
import io.agentbox.worker.image.store.ImageStore;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Snapshots on real crun sandboxes through the worker's RPCs: a snapshot holds written files,
 * deletions (whiteouts) and replaced directories (opaque), the source keeps running, sandboxes
 * from one snapshot are independent and outlive the source, and a deleted snapshot's layer is
 * collected once no sandbox runs on it.
 */
class SnapshotTest {
    static final Template BASE = Template.newBuilder().setName("base").setNetwork("host").build();

    static WorkerFixture worker(Template... templates) throws IOException {
        java.util.function.Function<Path, io.agentbox.worker.image.TemplateImages> store = dir -> {
            try {
                return new StoreTemplateImages(ImageStore.open(dir), RegistrySettings.DEFAULT, new RegistryCredentials());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        };
        return new WorkerFixture(store, List.of(), templates);
    }

    static WorkerFixture.Result sh(WorkerFixture w, String id, String user, String cmd) {
        return w.run(ExecStart.newBuilder().setSandboxId(id).setProcess(ProcessConfig.newBuilder().setCmd("/bin/sh")
                .addArgs("-c").addArgs(cmd).setUser(user)).build());
    }

    static String create(WorkerFixture w, String template) {
        return w.sandboxes.createSandbox(CreateSandboxRequest.newBuilder().setTemplate(template).setOwner("team-a")
                .setTemplateWaitMs(2000).build()).getSandboxId();
    }

    static Template fromSnapshot(Template source, String snapshotId) {
        return source.toBuilder().setName(snapshotId).setSnapshot(snapshotId).setImage("").setPoolSize(0).build();
    }

    static long layerDirs(WorkerFixture w) throws IOException {
        try (Stream<Path> s = Files.list(w.dataDir.resolve("images/layers"))) {
            return s.count();
        }
    }

    @Test
    void aSnapshotOfTheHostRootHoldsFilesWhiteoutsAndOpaqueDirsAndOutlivesItsSource() throws Exception {
        try (WorkerFixture w = worker(BASE)) {
            String src = create(w, "base");
            WorkerFixture.Result prep = sh(w, src, "root", "set -e; echo v1 > /home/user/s.txt; "
                    + "rm /etc/debian_version; rm -rf /etc/apt; mkdir /etc/apt; echo n > /etc/apt/only; "
                    + "mkdir -p /srv/tree/sub; echo deep > /srv/tree/sub/deep; ln -s s.txt /home/user/link; "
                    + "echo hard > /srv/h1; ln /srv/h1 /srv/h2; chmod 4750 /srv/h1; chown 1000:1000 /srv/tree/sub/deep");
            assertThat(prep.exitCode()).as(prep.stderr()).isZero();
            WorkerFixture.Result bg = sh(w, src, "user", "sleep 1000 >/dev/null 2>&1 & echo $!");
            SandboxInfo before = w.sandboxes.getSandbox(SandboxRef.newBuilder().setSandboxId(src).build());

            SnapshotInfo snap = w.sandboxes.createSnapshot(CreateSnapshotRequest.newBuilder().setSandboxId(src)
                    .setSnapshotId("snapone:default").build());
            assertThat(snap.getLayerDigest()).startsWith("sha256:");
            assertThat(snap.getTemplate()).isEqualTo("base");
            assertThat(snap.getLayerBytes()).isPositive();

            // the source keeps running, same end time, its process still there
            SandboxInfo after = w.sandboxes.getSandbox(SandboxRef.newBuilder().setSandboxId(src).build());
            assertThat(after.getEndAtMs()).isEqualTo(before.getEndAtMs());
            assertThat(sh(w, src, "user", "kill -0 " + bg.stdout().strip() + " && cat /home/user/s.txt").stdout())
                    .isEqualTo("v1\n");

            w.host.applyTemplates(List.of(BASE, fromSnapshot(BASE, "snapone:default")));
            String a = create(w, "snapone:default");
            String b = create(w, "snapone:default");
            String check = "cat /home/user/s.txt; test -e /etc/debian_version || echo no-debian-version; ls /etc/apt; "
                    + "cat /srv/tree/sub/deep; readlink /home/user/link; stat -c '%a %u %h' /srv/h1 /srv/tree/sub/deep; "
                    + "pgrep -x sleep || echo no-sleep";
            String expected = "v1\nno-debian-version\nonly\ndeep\ns.txt\n4750 0 2\n644 1000 1\nno-sleep\n";
            assertThat(sh(w, a, "root", check).stdout()).isEqualTo(expected);
            assertThat(Files.exists(Path.of("/etc/debian_version"))).as("the host keeps its file").isTrue();

            // independent copies: a write in one is seen neither in the other nor in the source
            assertThat(sh(w, a, "root", "echo changed-in-a > /home/user/s.txt").exitCode()).isZero();
            assertThat(sh(w, b, "user", "cat /home/user/s.txt").stdout()).isEqualTo("v1\n");
            assertThat(sh(w, src, "user", "cat /home/user/s.txt").stdout()).isEqualTo("v1\n");
            assertThat(sh(w, a, "user", "cat /home/user/s.txt").stdout()).isEqualTo("changed-in-a\n");

            // the snapshot outlives its source
            w.sandboxes.killSandbox(SandboxRef.newBuilder().setSandboxId(src).build());
            String c = create(w, "snapone:default");
            assertThat(sh(w, c, "root", check).stdout()).isEqualTo(expected);

            // delete: the name goes at once, the layer once no sandbox runs on it
            Path layer = w.dataDir.resolve("images/layers").resolve(snap.getLayerDigest().substring(7));
            assertThat(layer).isDirectory();
            w.sandboxes.deleteSnapshot(SnapshotRef.newBuilder().setSnapshotId("snapone:default").build());
            assertThatThrownBy(() -> w.sandboxes.deleteSnapshot(SnapshotRef.newBuilder().setSnapshotId("snapone:default").build()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
                        assertThat(ErrorReason.of(e)).contains(ErrorReason.SNAPSHOT_NOT_FOUND);
                    });
            w.host.applyTemplates(List.of(BASE)); // the hub drops the snapshot's template
            w.host.snapshots().collect();
            assertThat(layer).as("sandboxes still run on it").isDirectory();
            assertThat(sh(w, b, "user", "cat /home/user/s.txt").stdout()).isEqualTo("v1\n");
            for (String id : List.of(a, b, c)) {
                w.sandboxes.killSandbox(SandboxRef.newBuilder().setSandboxId(id).build());
            }
            w.host.snapshots().collect();
            assertThat(layer).as("collected once unused").doesNotExist();
        }
    }

    @Test
    void aSnapshotOfAnImageSandboxKeepsTheImageAndItsConfigAndFailsForAnUnknownSandbox() throws Exception {
        Template busy = Template.newBuilder().setName("busy").setNetwork("none").setImage("docker.io/library/busybox:snap").build();
        try (WorkerFixture w = worker(BASE)) {
            TestImages.Image image = TestImages.busybox("busybox:snap");
            w.host.snapshots().store().pull(ImageReference.parse("busybox:snap"), TestImages.source(image), p -> { });
            w.host.applyTemplates(List.of(BASE, busy.toBuilder().setPoolSize(1).build()));
            // the image is in the store, but its template's preparation runs on its own thread
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(60)).until(() -> w.host.pools().capacity()
                    .stream().anyMatch(p -> p.getTemplate().equals("busy") && p.getIdle() == 1));
            String src = create(w, "busy");
            assertThat(sh(w, src, "root", "echo img > /root/mark; rm -rf /bin/busybox.bak; ls /bin/busybox").exitCode()).isZero();
            w.sandboxes.createSnapshot(CreateSnapshotRequest.newBuilder().setSandboxId(src).setSnapshotId("team-a/img:v1").build());
            w.host.applyTemplates(List.of(BASE, busy, fromSnapshot(busy, "team-a/img:v1")));
            String copy = create(w, "team-a/img:v1");
            assertThat(sh(w, copy, "root", "cat /root/mark; test -e /usr/bin/java || echo not-the-host").stdout())
                    .isEqualTo("img\nnot-the-host\n");

            assertThatThrownBy(() -> w.sandboxes.createSnapshot(CreateSnapshotRequest.newBuilder().setSandboxId("nope")
                    .setSnapshotId("x:default").build())).isInstanceOfSatisfying(StatusRuntimeException.class, e ->
                    assertThat(ErrorReason.of(e)).contains(ErrorReason.SANDBOX_NOT_FOUND));
            assertThatThrownBy(() -> w.sandboxes.createSnapshot(CreateSnapshotRequest.newBuilder().setSandboxId(src)
                    .setSnapshotId("../evil").build())).isInstanceOfSatisfying(StatusRuntimeException.class, e ->
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
        }
    }

    @Test
    void aSnapshotOfATemplateBuiltOnBaseStacksOnItsLayersAndTheHostRoot() throws Exception {
        try (WorkerFixture w = worker(BASE)) {
            String ref = "builds.agentbox.internal/snap:b1";
            BuildTemplateRpcTest.Events events = new BuildTemplateRpcTest.Events();
            io.grpc.stub.StreamObserver<io.agentbox.protocol.v1.BuildInput> in = w.builds.buildTemplate(events);
            in.onNext(io.agentbox.protocol.v1.BuildInput.newBuilder().setSpec(io.agentbox.protocol.v1.TemplateBuildSpec
                    .newBuilder().setBuildId("b1").setImageReference(ref).setFromTemplate(true)
                    .addSteps(BuildTemplateRpcTest.step("RUN", "echo built > /home/user/built.txt; chown 1000:1000 /home/user/built.txt; rm /etc/debian_version", "root"))
                    .setStartCmd("exec sleep 1001").setReadyCmd("pgrep -f 'sleep 1001'").setMemoryMb(512)).build());
            in.onNext(io.agentbox.protocol.v1.BuildInput.newBuilder().setFilesDone(true).build());
            in.onCompleted();
            io.agentbox.protocol.v1.TemplateBuildResult r = events.result();
            assertThat(r.getOk()).as(r.getErrorMessage()).isTrue();
            Template built = Template.newBuilder().setName("built").setNetwork("none").setImage(ref).setPoolSize(1).build();
            w.host.applyTemplates(List.of(BASE, built));
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(60)).until(() -> w.host.pools().capacity()
                    .stream().anyMatch(p -> p.getTemplate().equals("built") && p.getIdle() == 1));
            String src = create(w, "built");
            assertThat(sh(w, src, "user", "echo mine > /home/user/mine.txt; rm /home/user/built.txt; echo again > /home/user/b2")
                    .exitCode()).isZero();
            w.sandboxes.createSnapshot(CreateSnapshotRequest.newBuilder().setSandboxId(src).setSnapshotId("t/built-snap:v1").build());
            w.host.applyTemplates(List.of(BASE, built, fromSnapshot(built, "t/built-snap:v1")));
            String copy = create(w, "t/built-snap:v1");
            // the snapshot layer over the built layer over the host root; the start command runs again
            assertThat(sh(w, copy, "user", "cat /home/user/mine.txt /home/user/b2; test -e /home/user/built.txt || echo gone; "
                    + "test -e /etc/debian_version || echo no-debian-version; test -x /usr/bin/java && echo host-root; "
                    + "pgrep -f 'sleep 1001' >/dev/null && echo started").stdout())
                    .isEqualTo("mine\nagain\ngone\nno-debian-version\nhost-root\nstarted\n");
            // a reset returns it to the snapshot with the start command running again
            assertThat(sh(w, copy, "user", "echo x > /home/user/mine.txt; pkill -x sleep; echo ok").exitCode()).isZero();
            w.sandboxes.resetSandbox(SandboxRef.newBuilder().setSandboxId(copy).build());
            assertThat(sh(w, copy, "user", "cat /home/user/mine.txt; pgrep -f 'sleep 1001' >/dev/null && echo started").stdout())
                    .isEqualTo("mine\nstarted\n");
        }
    }

    @Test
    void aSnapshotOf50MbChangedTakesLittleFreezeTime() throws Exception {
        try (WorkerFixture w = worker(BASE)) {
            String src = create(w, "base");
            WorkerFixture.Result fill = sh(w, src, "user", "mkdir -p /home/user/data && cd /home/user/data && "
                    + "for i in $(seq 1 50); do head -c 1048576 /dev/urandom > f$i; done; "
                    + "for i in $(seq 1 200); do echo $i > s$i; done");
            assertThat(fill.exitCode()).as(fill.stderr()).isZero();
            List<Long> took = new ArrayList<>();
            List<Long> frozen = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                SnapshotInfo s = w.sandboxes.createSnapshot(CreateSnapshotRequest.newBuilder().setSandboxId(src)
                        .setSnapshotId("big" + i + ":default").build());
                assertThat(s.getLayerBytes()).isGreaterThanOrEqualTo(50L * 1048576);
                took.add(s.getTookMs());
                frozen.add(s.getFrozenUs());
            }
            System.out.println("snapshot of 50 MB changed: took ms " + took + ", frozen us " + frozen);
            // identical content: one layer in the store for all three
            assertThat(layerDirs(w)).isEqualTo(1);
        }
    }
}
