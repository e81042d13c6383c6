package io.agentbox.worker.runtime.local;

import io.agentbox.protocol.ErrorReason;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.image.unpack.Trees;
import io.agentbox.worker.runtime.LaunchSpec;
import io.agentbox.worker.runtime.LaunchedProcess;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;


/** Real crun containers of the local runtime: root inside, a writable root, users. */
class ContainerRuntimeTest {
    static Path dir;
    static LocalRuntime rt;
    static final Template BASE = Template.newBuilder().setName("base").setNetwork("host").build();

    static Path layer;

    @BeforeAll
    static void up() throws Exception {
        dir = Files.createTempDirectory(Path.of("/var/tmp"), "agentbox-crt-");
        layer = BusyboxRootfs.build(dir.resolve("layer"));
        rt = new LocalRuntime(dir, List.of(), t -> new io.agentbox.worker.image.SandboxImage(t.getImage(), List.of(layer),
                new io.agentbox.worker.image.ImageConfig(List.of("PATH=/bin", "FROM_IMAGE=yes", "OVERRIDE=image"),
                        List.of(), List.of("sh"), "/srv", "")), null);
    }

    @AfterAll
    static void down() throws Exception {
        if (rt != null) {
            rt.close();
        }
        Trees.deleteRecursively(dir);
    }

    record Out(int code, String out, String err) {}

    static Out sh(RuntimeSandbox s, String user, String script) throws Exception {
        LaunchedProcess p = s.launch(new LaunchSpec("/bin/sh", List.of("-c", script), Map.of(), "/", false, null, user));
        CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> {
            try {
                return p.stderr().readAllBytes();
            } catch (Exception e) {
                return new byte[0];
            }
        });
        byte[] out = p.stdout().readAllBytes();
        int code = p.waitFor();
        return new Out(code, new String(out, StandardCharsets.UTF_8), new String(err.get(10, TimeUnit.SECONDS), StandardCharsets.UTF_8));
    }

    static RuntimeSandbox start(Template t) {
        return rt.start("crt-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36), t);
    }

    @Test
    void rootInsideAndUserByDefaultWithAWritableRootThatStaysInTheSandbox() throws Exception {
        RuntimeSandbox a = start(BASE);
        RuntimeSandbox b = start(BASE);
        String marker = "agentbox-" + System.nanoTime();
        try {
            assertThat(sh(a, "root", "id -u; echo $HOME").out()).isEqualTo("0\n/root\n");
            assertThat(sh(a, "user", "id -u; id -un; echo $HOME").out()).isEqualTo("1000\nuser\n/home/user\n");
            Out w = sh(a, "root", "echo r > /usr/" + marker + " && echo e > /etc/" + marker + " && cat /usr/" + marker
                    + " /etc/" + marker);
            assertThat(w.code()).as(w.err()).isZero();
            assertThat(w.out()).isEqualTo("r\ne\n");
            Out u = sh(a, "user", "echo h > /home/user/" + marker + " && echo t > /tmp/" + marker + " && cat /home/user/"
                    + marker + " /tmp/" + marker + "; touch /usr/x-" + marker);
            assertThat(u.out()).isEqualTo("h\nt\n");
            assertThat(u.err()).contains("Permission denied");
            assertThat(Path.of("/usr/" + marker)).doesNotExist();
            assertThat(Path.of("/etc/" + marker)).doesNotExist();
            assertThat(sh(b, "root", "ls /usr/" + marker + " /etc/" + marker + " 2>&1 | grep -c 'No such'").out().strip())
                    .isEqualTo("2");
        } finally {
            a.kill();
            b.kill();
        }
        RuntimeSandbox c = start(BASE);
        try {
            assertThat(sh(c, "root", "cat /usr/" + marker).code()).isNotZero();
        } finally {
            c.kill();
        }
    }

    @Test
    void anImageWithoutAShellRunsWithItsOwnersEnvAndWorkingDir() throws Exception {
        RuntimeSandbox a = start(BASE.toBuilder().setImage("test/busybox:1").build());
        try {
            LaunchedProcess p = a.launch(new LaunchSpec("sh", List.of("-c", "pwd; echo $FROM_IMAGE $OVERRIDE; id -u; "
                    + "stat -c %u:%g /data/svc-owned; cat /data/svc-owned"), Map.of("OVERRIDE", "caller"), "", false,
                    null, "root"));
            String out = new String(p.stdout().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor()).isZero();
            assertThat(out).isEqualTo("/srv\nyes caller\n0\n999:999\nsvc\n");
            Out su = sh(a, "root", "su -s /bin/sh svc -c 'id -u; touch /tmp/by-svc'; stat -c %u /tmp/by-svc");
            assertThat(su.out()).as(su.err()).isEqualTo("999\n999\n");
            // the image has no /root: the engine layer adds root's home (0700), the default cwd of root
            Out rootHome = sh(a, "root", "stat -c %a:%u /root; touch /root/x && echo writable");
            assertThat(rootHome.out()).as(rootHome.err()).isEqualTo("700:0\nwritable\n");
            Out u = sh(a, "user", "id; echo $HOME; ls -ld /home/user | cut -c1-10");
            assertThat(u.out()).startsWith("uid=1000(user) gid=1000(user)").contains("/home/user\ndrwxr-xr-x");
            // the image's own binaries, not busybox's builtin applets, answer for names on PATH
            assertThat(sh(a, "user", "echo hi").out()).isEqualTo("hi\n");
            Out missing = sh(a, "user", "exec nonexistent-tool");
            assertThat(missing.code()).isNotZero();
        } finally {
            a.kill();
        }
    }

    @Test
    void theHostRootIsMasked() throws Exception {
        RuntimeSandbox a = start(BASE);
        try {
            Out o = sh(a, "root", "ls -A /root /work /home /tmp /var/tmp " + dir + " 2>&1; ls /etc/shadow 2>&1; "
                    + "grep -c '^user:x:1000:1000:' /etc/passwd; grep -c ':x:1000:' /etc/group");
            assertThat(o.out()).contains("/root:\n\n").contains("/home:\nuser\n").contains("/tmp:\n\n")
                    .contains("/var/tmp:\n\n").containsPattern("'?" + dir + "'?: No such file")
                    .containsPattern("'?/etc/shadow'?: No such file").endsWith("1\n1\n");
            assertThat(o.out()).doesNotContain("/work:\nwt");
        } finally {
            a.kill();
        }
    }

    @Test
    void seccompAndCapabilitiesFenceRoot() throws Exception {
        RuntimeSandbox a = start(BASE);
        try {
            Out o = sh(a, "root", "/.agentbox/bin/busybox unshare -U true; echo rc=$?; "
                    + "grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status");
            assertThat(o.out()).contains("rc=1").contains("CapEff:\t00000000a80425fb").contains("NoNewPrivs:\t1")
                    .contains("Seccomp:\t2");
            assertThat(o.err()).contains("Operation not permitted");
            assertThat(sh(a, "user", "grep CapEff /proc/self/status").out()).contains("0000000000000000");
        } finally {
            a.kill();
        }
    }

    @Test
    void limitsOfTheTemplateHold() throws Exception {
        Template t = BASE.toBuilder().setMemoryMb(64).setPidsLimit(64).setCpuCount(1).setDiskSizeMb(64).build();
        RuntimeSandbox a = start(t);
        try {
            Out mem = sh(a, "user", "x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo survived");
            assertThat(mem.out()).doesNotContain("survived");
            Out pids = sh(a, "user", "n=0; for i in $(seq 1 100); do sleep 3 & n=$((n+1)); done; echo started");
            assertThat(pids.err() + pids.out()).containsAnyOf("fork", "Resource temporarily unavailable");
            Thread.sleep(3500); // the sleeps end
            assertThat(sh(a, "user", "echo alive").out()).isEqualTo("alive\n");
            List<Path> cg = rt.cgroups().dirsOf(((LocalSandbox) a).id());
            Path cpuacct = cg.stream().filter(p -> p.toString().contains("/cpuacct/") || p.toString().contains("/cpu,cpuacct/"))
                    .findFirst().orElse(null);
            if (cpuacct != null) {
                long before = Long.parseLong(Files.readString(cpuacct.resolve("cpuacct.usage")).strip());
                sh(a, "user", "timeout 2 sh -c 'while :; do :; done' & timeout 2 sh -c 'while :; do :; done'; wait");
                long used = Long.parseLong(Files.readString(cpuacct.resolve("cpuacct.usage")).strip()) - before;
                assertThat(used / 2e9).as("CPUs used over 2 s").isLessThan(1.5).isGreaterThan(0.3);
            } else {
                Path v2 = cg.get(0);
                long before = usageUsec(v2);
                sh(a, "user", "timeout 2 sh -c 'while :; do :; done' & timeout 2 sh -c 'while :; do :; done'; wait");
                assertThat((usageUsec(v2) - before) / 2e6).as("CPUs used over 2 s").isLessThan(1.5).isGreaterThan(0.3);
            }
        } finally {
            a.kill();
        }
    }

    /** The writable layer is a tmpfs of diskSizeMb; its pages count against memoryMb too, so memory > disk here. */
    @Test
    void theDiskLimitGivesNoSpaceAndTheSandboxGoesOn() throws Exception {
        RuntimeSandbox a = start(BASE.toBuilder().setMemoryMb(256).setDiskSizeMb(64).build());
        try {
            Out disk = sh(a, "root", "dd if=/dev/zero of=/big bs=1M count=100 2>&1; rm -f /big; echo after");
            assertThat(disk.out()).contains("No space left").contains("after");
            assertThat(sh(a, "user", "echo x > /home/user/f && cat /home/user/f").out()).isEqualTo("x\n");
        } finally {
            a.kill();
        }
    }

    private static long usageUsec(Path cg) throws Exception {
        return Files.readAllLines(cg.resolve("cpu.stat")).stream().filter(l -> l.startsWith("usage_usec"))
                .map(l -> Long.parseLong(l.split(" ")[1])).findFirst().orElseThrow();
    }

    @Test
    void orphansAreReapedAndNetworkNoneHasOnlyLoopback() throws Exception {
        RuntimeSandbox a = start(BASE.toBuilder().setNetwork("none").build());
        try {
            sh(a, "user", "sh -c 'sleep 0.3 &' ; sleep 1");
            assertThat(sh(a, "user", "cat /proc/[0-9]*/stat 2>/dev/null | awk '{print $3}' | grep -c Z || true").out().strip())
                    .isEqualTo("0");
            assertThat(sh(a, "user", "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '").out()).isEqualTo("lo\n");
        } finally {
            a.kill();
        }
        assertThat(Reaped.ended(((LocalSandbox) a).initPid())).isTrue();
        assertThat(rt.cgroups().dirsOf(((LocalSandbox) a).id())).isEmpty();
    }

    @Test
    void aFrozenSandboxStandsStillKeepsItsProcessesAndCanStillBeKilled() throws Exception {
        RuntimeSandbox a = start(BASE.toBuilder().setNetwork("none").build());
        try {
            // a background counter: while frozen its file must not change, after the thaw it goes on with the same pid
            sh(a, "user", "(i=0; while :; do i=$((i+1)); echo $i > /tmp/n; sleep 0.01; done) >/dev/null 2>&1 & echo $! > /tmp/pid");
            Thread.sleep(300);
            String pid = sh(a, "root", "cat /tmp/pid").out().strip();
            a.freeze();
            a.freeze(); // idempotent
            Path freezer = rt.cgroups().mode == Cgroups.Mode.V2 ? null
                    : Cgroups.ROOT.resolve("freezer/agentbox").resolve(a.id()).resolve("freezer.state");
            if (freezer != null) {
                assertThat(Files.readString(freezer).strip()).isEqualTo("FROZEN");
            }
            String counter = Files.readString(hostPathOfTmpN(a));
            Thread.sleep(300);
            assertThat(Files.readString(hostPathOfTmpN(a))).isEqualTo(counter);
            a.thaw();
            assertThat(sh(a, "root", "kill -0 " + pid + " && echo alive").out()).isEqualTo("alive\n");
            Thread.sleep(300);
            assertThat(Long.parseLong(sh(a, "root", "cat /tmp/n").out().strip())).isGreaterThan(Long.parseLong(counter.strip()));
            a.freeze();
        } finally {
            a.kill(); // frozen: kill must thaw first or the processes would never die
        }
        assertThat(Reaped.ended(((LocalSandbox) a).initPid())).isTrue();
        assertThat(rt.cgroups().dirsOf(a.id())).isEmpty();
    }

    /**
     * A request that reaches a sandbox after it was killed (a kill racing a file read or a command)
     * is told the sandbox is gone, NOT_FOUND + SANDBOX_NOT_FOUND (404 or E2B's 502 at the hub), not
     * UNAVAILABLE, which the hub answers as a 503 that invites a retry (InputFuzzTest saw one).
     */
    @Test
    void callsOnAKilledSandboxSayItIsGone() throws Exception {
        RuntimeSandbox a = start(BASE.toBuilder().setNetwork("none").build());
        a.kill();
        List<Runnable> calls = List.of(
                () -> a.files(LaunchSpec.USER).stat("/tmp"),
                () -> a.files(LaunchSpec.ROOT).list("/", 1),
                () -> a.launch(new LaunchSpec("true", List.of(), Map.of(), "/", false)),
                a::freeze);
        for (Runnable call : calls) {
            StatusRuntimeException e = catchThrowableOfType(call::run, StatusRuntimeException.class);
            assertThat(e).as("a call on a killed sandbox fails").isNotNull();
            assertThat(e.getStatus().getCode()).as(e.toString()).isEqualTo(Status.Code.NOT_FOUND);
            assertThat(ErrorReason.of(e)).contains(ErrorReason.SANDBOX_NOT_FOUND);
            assertThat(e.getStatus().getDescription()).contains(a.id(), "not running");
        }
    }

    /** /tmp/n read from the host through the init's root (no exec: the sandbox is frozen). */
    private static Path hostPathOfTmpN(RuntimeSandbox s) {
        return Path.of("/proc/" + ((LocalSandbox) s).initPid() + "/root/tmp/n");
    }
}
