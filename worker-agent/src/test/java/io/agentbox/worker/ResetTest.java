package io.agentbox.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.protocol.ErrorReason;
import io.agentbox.protocol.v1.CreateSnapshotRequest;
import io.agentbox.protocol.v1.SandboxInfo;
import io.agentbox.protocol.v1.SandboxRef;
import io.agentbox.protocol.v1.Template;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Reset on real crun sandboxes: files back to the template's (or snapshot's), every process
 * gone, the same id, end time and address (isolated network: same interface in the same
 * network namespace).
 */
class ResetTest {
    static final Template ISOLATED = Template.newBuilder().setName("base").setNetwork("isolated").build();

    static String address(WorkerFixture w, String id) {
        WorkerFixture.Result r = SnapshotTest.sh(w, id, "root", "ip -o -4 addr show | grep -v ' lo ' | awk '{print $2, $4}'");
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        return r.stdout().strip();
    }

    @Test
    void resetRestoresTheFileSystemKillsProcessesAndKeepsIdEndTimeAndAddress() throws Exception {
        try (WorkerFixture w = SnapshotTest.worker(ISOLATED)) {
            String id = SnapshotTest.create(w, "base");
            String ip = address(w, id);
            assertThat(ip).matches("\\S+ \\d+\\.\\d+\\.\\d+\\.\\d+/\\d+");
            SandboxInfo before = w.sandboxes.getSandbox(SandboxRef.newBuilder().setSandboxId(id).build());
            List<Long> ms = new ArrayList<>();
            for (int round = 0; round < 8; round++) {
                // a listener on the sandbox's loopback: the network namespace outlives the reset, the
                // process must not (its port is free at once afterwards)
                WorkerFixture.Result dirty = SnapshotTest.sh(w, id, "root", "echo r" + round + " > /home/user/episode.txt; "
                        + "rm -f /etc/debian_version; (sleep 1000 >/dev/null 2>&1 &); "
                        + "(busybox nc -l -p 7777 >/dev/null 2>&1 </dev/null &); sleep 0.2; "
                        + "python3 -c 'import socket; socket.socket().bind((\"127.0.0.1\", 7777))' 2>/dev/null || echo port-taken");
                assertThat(dirty.stdout()).isEqualTo("port-taken\n");
                long t = System.nanoTime();
                SandboxInfo after = w.sandboxes.resetSandbox(SandboxRef.newBuilder().setSandboxId(id).build());
                ms.add((System.nanoTime() - t) / 1_000_000);
                assertThat(after.getSandboxId()).isEqualTo(id);
                assertThat(after.getEndAtMs()).isEqualTo(before.getEndAtMs());
                WorkerFixture.Result clean = SnapshotTest.sh(w, id, "root", "test -e /home/user/episode.txt || echo no-episode; "
                        + "test -e /etc/debian_version && echo host-file-back; pgrep -x sleep || echo no-sleep; "
                        + "python3 -c 'import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 7777)); print(\"port-free\")'");
                assertThat(clean.stdout()).as(clean.stderr()).isEqualTo("no-episode\nhost-file-back\nno-sleep\nport-free\n");
                assertThat(address(w, id)).isEqualTo(ip);
            }
            // outbound traffic still leaves through the kept interface: the gateway answers
            assertThat(SnapshotTest.sh(w, id, "root", "ip route | grep -c default").stdout().strip()).isEqualTo("1");
            List<Long> sorted = new ArrayList<>(ms);
            Collections.sort(sorted);
            System.out.println("reset ms " + ms + " p50 " + sorted.get(sorted.size() / 2));

            w.sandboxes.killSandbox(SandboxRef.newBuilder().setSandboxId(id).build());
            assertThatThrownBy(() -> w.sandboxes.resetSandbox(SandboxRef.newBuilder().setSandboxId(id).build()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e ->
                            assertThat(ErrorReason.of(e)).contains(ErrorReason.SANDBOX_NOT_FOUND));
        }
    }

    /** Whether sandbox {@code id} has a second crun container (its standby on the other pair of mounts). */
    static boolean hasStandby(WorkerFixture w, String id) {
        return java.nio.file.Files.isDirectory(w.dataDir.resolve("crun").resolve(id + ".1"));
    }

    @Test
    void aTemplateResetOnceGivesItsNextSandboxesAStandbyAtClaimAndOthersNone() throws Exception {
        Template other = ISOLATED.toBuilder().setName("other").build();
        try (WorkerFixture w = SnapshotTest.worker(ISOLATED, other)) {
            String first = SnapshotTest.create(w, "base");
            SnapshotTest.sh(w, first, "root", "echo x > /home/user/f");
            w.sandboxes.resetSandbox(SandboxRef.newBuilder().setSandboxId(first).build()); // no standby: a restart

            String untouched = SnapshotTest.create(w, "other");
            String id = SnapshotTest.create(w, "base");
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (!hasStandby(w, id) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(hasStandby(w, id)).as("a claim of a template reset before starts a standby").isTrue();
            Thread.sleep(500);
            assertThat(hasStandby(w, untouched)).as("a template never reset here gets none").isFalse();

            String ip = address(w, id);
            WorkerFixture.Result dirty = SnapshotTest.sh(w, id, "root", "echo e > /home/user/episode.txt; "
                    + "(sleep 1000 >/dev/null 2>&1 &); "
                    // the background shell may not have exec'd sleep yet when pgrep first looks
                    + "i=0; while [ $i -lt 100 ]; do pgrep -x sleep >/dev/null && { echo running; break; }; "
                    + "sleep 0.05; i=$((i+1)); done");
            assertThat(dirty.stdout()).isEqualTo("running\n");
            w.sandboxes.resetSandbox(SandboxRef.newBuilder().setSandboxId(id).build());
            WorkerFixture.Result clean = SnapshotTest.sh(w, id, "root", "test -e /home/user/episode.txt || echo no-episode; "
                    + "pgrep -x sleep || echo no-sleep");
            assertThat(clean.stdout()).as(clean.stderr()).isEqualTo("no-episode\nno-sleep\n");
            assertThat(address(w, id)).isEqualTo(ip);
            assertThat(SnapshotTest.sh(w, id, "user", "cat /proc/1/comm").stdout()).as("a fresh init").isEqualTo("init\n");

            // a kill right after a claim (its standby maybe still starting) leaves no container behind
            String shortLived = SnapshotTest.create(w, "base");
            w.sandboxes.killSandbox(SandboxRef.newBuilder().setSandboxId(shortLived).build());
            assertThat(hasStandby(w, shortLived)).isFalse();
            assertThat(java.nio.file.Files.exists(w.dataDir.resolve("crun").resolve(shortLived))).isFalse();
        }
    }

    @Test
    void aSandboxFromASnapshotResetsToTheSnapshot() throws Exception {
        try (WorkerFixture w = SnapshotTest.worker(ISOLATED)) {
            String src = SnapshotTest.create(w, "base");
            SnapshotTest.sh(w, src, "root", "echo prepared > /home/user/state.txt");
            w.sandboxes.createSnapshot(CreateSnapshotRequest.newBuilder().setSandboxId(src).setSnapshotId("env:default").build());
            w.host.applyTemplates(List.of(ISOLATED, SnapshotTest.fromSnapshot(ISOLATED, "env:default")));
            String id = SnapshotTest.create(w, "env:default");
            SnapshotTest.sh(w, id, "root", "echo dirty > /home/user/state.txt; touch /home/user/new");
            w.sandboxes.resetSandbox(SandboxRef.newBuilder().setSandboxId(id).build());
            assertThat(SnapshotTest.sh(w, id, "user", "cat /home/user/state.txt; ls /home/user/new 2>/dev/null || echo gone")
                    .stdout()).isEqualTo("prepared\ngone\n");
            // pause, resume and metrics follow the container a reset moved the sandbox to
            SnapshotTest.sh(w, id, "root", "(sleep 1000 >/dev/null 2>&1 &); echo ok");
            w.sandboxes.pauseSandbox(io.agentbox.protocol.v1.PauseSandboxRequest.newBuilder().setSandboxId(id).build());
            assertThat(w.sandboxes.getSandbox(SandboxRef.newBuilder().setSandboxId(id).build()).getState()).isEqualTo("paused");
            assertThatThrownBy(() -> w.sandboxes.resetSandbox(SandboxRef.newBuilder().setSandboxId(id).build()))
                    .as("a paused sandbox is resumed before a reset").isInstanceOfSatisfying(StatusRuntimeException.class, e ->
                            assertThat(ErrorReason.of(e)).contains(ErrorReason.SANDBOX_PAUSED));
            w.sandboxes.resumeSandbox(io.agentbox.protocol.v1.ResumeSandboxRequest.newBuilder().setSandboxId(id).build());
            assertThat(SnapshotTest.sh(w, id, "root", "pgrep -x sleep >/dev/null && echo kept").stdout()).isEqualTo("kept\n");

            // after an odd number of resets the sandbox runs on the other pair of mounts: a snapshot
            // of it takes the writable layer it has now
            SnapshotTest.sh(w, id, "root", "echo after-reset > /home/user/state.txt");
            w.sandboxes.createSnapshot(CreateSnapshotRequest.newBuilder().setSandboxId(id).setSnapshotId("env:v2").build());
            w.host.applyTemplates(List.of(ISOLATED, SnapshotTest.fromSnapshot(ISOLATED, "env:default"),
                    SnapshotTest.fromSnapshot(ISOLATED, "env:v2")));
            String copy = SnapshotTest.create(w, "env:v2");
            assertThat(SnapshotTest.sh(w, copy, "user", "cat /home/user/state.txt").stdout()).isEqualTo("after-reset\n");
            w.sandboxes.resetSandbox(SandboxRef.newBuilder().setSandboxId(id).build());
            assertThat(SnapshotTest.sh(w, id, "user", "cat /home/user/state.txt").stdout()).isEqualTo("prepared\n");
        }
    }
}
