package io.agentbox.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.protocol.v1.SandboxRef;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class IsolationTest {
    static WorkerFixture w;

    @BeforeAll
    static void up() throws Exception {
        w = new WorkerFixture(WorkerFixture.template("base", 2));
    }

    @AfterAll
    static void down() throws Exception {
        w.close();
    }

    @Test
    void sandboxesDoNotSeeEachOthersFilesOrProcesses() {
        String a = w.create();
        String b = w.create();
        WorkerFixture.Result started = w.run(a, "echo secret-a > /home/user/a.txt; echo secret-a > /tmp/a.tmp; "
                + "nohup sleep 300 >/dev/null 2>&1 & echo started");
        assertThat(started.stdout()).isEqualTo("started\n");
        assertThat(w.run(b, "ls -A /home/user /tmp").stdout()).isEqualTo("/home/user:\n\n/tmp:\n");
        assertThat(w.run(b, "find / -xdev -name 'a.tx?' 2>/dev/null | wc -l").stdout().strip()).isEqualTo("0");
        assertThat(w.run(b, "ps -eo args | grep -c '^sleep 30[0]' || true").stdout().strip()).isEqualTo("0");
        assertThat(w.run(b, "ls " + w.dataDir + "/sandboxes 2>&1 || true").stdout()).contains("No such file");
        assertThat(w.run(b, "hostname").stdout().strip()).isEqualTo(b);
        assertThat(w.run(a, "ps -eo args | grep -c '^sleep 30[0]'").stdout().strip()).isEqualTo("1");
        assertThat(w.run(a, "cat /home/user/a.txt /tmp/a.tmp").stdout()).isEqualTo("secret-a\nsecret-a\n");
    }

    @Test
    void ioUringIsRefusedInsideWhileTheHostAllowsIt() throws Exception {
        // io_uring_setup is syscall 425 on x86_64 and aarch64; the host must allow it, or the check proves nothing
        String probe = "import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
                + "r = libc.syscall(425, 8, ctypes.create_string_buffer(120)); print(r, ctypes.get_errno())";
        Process host = new ProcessBuilder("python3", "-c", probe).redirectErrorStream(true).start();
        String onHost = new String(host.getInputStream().readAllBytes()).strip();
        assertThat(host.waitFor()).isZero();
        assertThat(onHost).as("io_uring on the host (kernel.io_uring_disabled must be 0)").endsWith(" 0")
                .doesNotStartWith("-1");
        String a = w.create();
        assertThat(w.run(a, "python3 -c '" + probe + "'").stdout().strip()).isEqualTo("-1 1"); // EPERM
    }

    @Test
    void sandboxCannotWriteHostFilesNorReadRootOnlyFiles() throws Exception {
        String a = w.create();
        Path marker = Files.createTempFile(Path.of("/var/tmp"), "agentbox-host-", ".txt");
        try {
            WorkerFixture.Result r = w.run(a, "touch /etc/pwned; echo x >> " + marker + "; touch /usr/pwned; "
                    + "cat /etc/shadow; ls /root; id -u; echo done");
            assertThat(r.stdout()).endsWith("1000\ndone\n").doesNotContain("root:");
            assertThat(r.stderr()).contains("/etc/pwned").contains("/usr/pwned");
            assertThat(Path.of("/etc/pwned")).doesNotExist();
            assertThat(Path.of("/usr/pwned")).doesNotExist();
            assertThat(Files.readString(marker)).isEmpty();
        } finally {
            Files.deleteIfExists(marker);
        }
    }

    @Test
    void sandboxInitDoesNotCarryTheWorkersEnvironment() throws Exception {
        String a = w.create();
        // the init (pid 1, root inside: read from the host) keeps the environment it was started with
        w.run(a, "true");
        String init = null;
        for (String pid : Files.readString(Path.of("/sys/fs/cgroup/pids/agentbox", a, "cgroup.procs")).split("\\s+")) {
            if (!pid.isBlank() && Files.readString(Path.of("/proc", pid, "comm")).strip().equals("init")) {
                init = pid;
            }
        }
        assertThat(init).isNotNull();
        assertThat(System.getenv()).containsKey("HOME");
        assertThat(new String(Files.readAllBytes(Path.of("/proc", init, "environ")), java.nio.charset.StandardCharsets.UTF_8)
                .split("\0")).containsOnly("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root");
    }

    @Test
    void hiddenHostDirectoriesAreEmptyInsideSandboxes() throws Exception {
        // not below a directory every sandbox sees empty anyway (/tmp, /var/tmp, /home, ...)
        Path secretDir = Files.createTempDirectory(Path.of("/opt"), "agentbox-hub-");
        try {
            Files.setAttribute(secretDir, "unix:mode", 0755);
            Path secret = Files.writeString(secretDir.resolve("secret.txt"), "hub-secret");
            Files.setAttribute(secret, "unix:mode", 0644);
            try (WorkerFixture hidden = new WorkerFixture(List.of(secretDir), WorkerFixture.template("base", 1))) {
                String a = hidden.create();
                WorkerFixture.Result r = hidden.run(a, "ls -A " + secretDir + "; cat " + secret + "; echo end");
                assertThat(r.stdout()).isEqualTo("end\n");
                assertThat(r.stderr()).contains("No such file");
            }
            // the same directory is visible to a sandbox of a worker that does not hide it
            String b = w.create();
            assertThat(w.run(b, "cat " + secret).stdout()).isEqualTo("hub-secret");
        } finally {
            org.apache.commons.io.file.PathUtils.deleteDirectory(secretDir);
        }
    }

    /**
     * The Quickstart as root: the hub's data dir is ~/.agentbox under /root (mode 700). The
     * directory must not be readable, and sandboxes must start.
     */
    @Test
    void aHiddenDirectoryBelowAPrivateParentNeitherBreaksSandboxesNorShows() throws Exception {
        Path parent = Files.createTempDirectory(Path.of("/opt"), "agentbox-root-");
        try {
            Files.setAttribute(parent, "unix:mode", 0700);
            Path hubDir = Files.createDirectories(parent.resolve(".agentbox"));
            Path secret = Files.writeString(hubDir.resolve("admin-key"), "hub-secret");
            try (WorkerFixture hidden = new WorkerFixture(List.of(hubDir), WorkerFixture.template("base", 1))) {
                String a = hidden.create();
                WorkerFixture.Result r = hidden.run(a, "cat " + secret + "; ls " + parent + "; echo end");
                assertThat(r.stdout()).isEqualTo("end\n");
                assertThat(r.stderr()).doesNotContain("hub-secret");
            }
        } finally {
            org.apache.commons.io.file.PathUtils.deleteDirectory(parent);
        }
    }

    @Test
    void userIdentityInsideTheSandbox() {
        String a = w.create();
        WorkerFixture.Result r = w.run(a, "id; echo $HOME; getent passwd user");
        assertThat(r.stdout()).startsWith("uid=1000(user) gid=1000(user)")
                .contains("/home/user\n").contains("user:x:1000:1000:user:/home/user:/bin/bash");
    }

    @Test
    void killRemovesProcessesAndFiles() {
        String a = w.create();
        w.run(a, "echo data > /home/user/f.txt; (setsid sleep 300 >/dev/null 2>&1 &); echo ok");
        Path bundle = w.dataDir.resolve("sandboxes").resolve(a);
        assertThat(bundle.resolve("config.json")).exists();
        assertThat(w.run(a, "cat /home/user/f.txt").stdout()).isEqualTo("data\n");
        long before = sandboxProcesses(a);
        assertThat(before).as("init, the orphaned sleep").isGreaterThanOrEqualTo(2);
        w.sandboxes.killSandbox(SandboxRef.newBuilder().setSandboxId(a).build());
        assertThat(bundle).doesNotExist();
        assertThat(sandboxProcesses(a)).isZero();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> w.run(a, "true"))
                .cause().isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
        org.assertj.core.api.Assertions.assertThatThrownBy(() ->
                        w.sandboxes.killSandbox(SandboxRef.newBuilder().setSandboxId(a).build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
    }

    /** Processes in the sandbox's pids cgroup (v1 or v2); 0 once the cgroup is gone. */
    static long sandboxProcesses(String id) {
        for (Path cg : List.of(Path.of("/sys/fs/cgroup/pids/agentbox", id), Path.of("/sys/fs/cgroup/agentbox", id))) {
            try {
                return Files.readString(cg.resolve("cgroup.procs")).lines().filter(l -> !l.isBlank()).count();
            } catch (java.io.IOException e) {
                // not this layout, or gone
            }
        }
        return 0;
    }
}
