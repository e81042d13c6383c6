package io.agentbox.worker.runtime.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.agentbox.protocol.ErrorReason;
import io.agentbox.protocol.v1.EntryInfo;
import io.agentbox.protocol.v1.FileType;
import io.agentbox.worker.runtime.LaunchSpec;
import io.agentbox.worker.runtime.LaunchedProcess;
import io.agentbox.worker.runtime.SandboxFiles;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Commands and files of a kubernetes sandbox go through {@code PodExec}. The mock API server
 * cannot exec, so a local shell stands in for the pod here: this proves the launch wrapper, the
 * pid handshake and the file scripts over the exec seam, not the exec transport itself.
 */
class KubeSandboxExecTest {
    private final KubeMock mock = new KubeMock();
    private final KubeMock.LocalShellExec exec = new KubeMock.LocalShellExec();

    @TempDir
    Path dir;

    @AfterEach
    void tearDown() {
        mock.close();
    }

    private KubeSandbox claimOne() {
        KubernetesRuntime rt = mock.runtime("worker-a", exec);
        KubePool pool = mock.open(rt, "sh", 1);
        await().atMost(Duration.ofSeconds(20)).until(() -> rt.isLeader() && pool.idle() == 1);
        return (KubeSandbox) pool.claim(KubeMock.claim("sh"));
    }

    @Test
    void commandsRunInTheClaimedPodWithEnvAndCwd() throws Exception {
        KubeSandbox sandbox = claimOne();
        LaunchedProcess p = sandbox.launch(new LaunchSpec("sh", List.of("-c", "echo \"$GREETING from $(pwd)\"; exit 3"),
                Map.of("GREETING", "hello"), dir.toString(), false));

        assertThat(p.pid()).isPositive();
        assertThat(new String(p.stdout().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("hello from " + dir + "\n");
        assertThat(p.waitFor()).isEqualTo(3);
        assertThat(exec.podsUsed).containsOnly(sandbox.confirmed().get());
    }

    @Test
    void missingCwdIsAnInvalidArgument() {
        KubeSandbox sandbox = claimOne();
        assertThatThrownBy(() -> sandbox.launch(new LaunchSpec("true", List.of(), Map.of(), dir + "/nope", false)))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
    }

    @Test
    void filesAreWrittenReadListedAndRemovedThroughExec() throws Exception {
        KubeSandbox sandbox = claimOne();
        SandboxFiles files = sandbox.files();
        String path = dir + "/a/b.txt";

        try (SandboxFiles.Write w = files.write(path)) {
            w.data().write("payload".getBytes(StandardCharsets.UTF_8));
            EntryInfo info = w.finish();
            assertThat(info.getSize()).isEqualTo(7);
            assertThat(info.getType()).isEqualTo(FileType.FILE_TYPE_FILE);
        }
        assertThat(Files.readString(Path.of(path))).isEqualTo("payload");
        try (SandboxFiles.Read r = files.read(path)) {
            assertThat(new String(r.data().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("payload");
            r.finish();
        }
        assertThat(files.list(dir.toString(), 2)).extracting(EntryInfo::getPath)
                .containsExactlyInAnyOrder(dir + "/a", path);
        files.remove(dir + "/a");
        assertThatThrownBy(() -> files.stat(path)).isInstanceOfSatisfying(StatusRuntimeException.class,
                e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
    }

    @Test
    void releasedSandboxRefusesCommands() {
        KubeSandbox sandbox = claimOne();
        sandbox.kill();
        assertThatThrownBy(() -> sandbox.launch(new LaunchSpec("true", List.of(), Map.of(), "/", false)))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> {
                            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
                            assertThat(ErrorReason.of(e)).contains(ErrorReason.SANDBOX_NOT_FOUND);
                        });
    }
}
