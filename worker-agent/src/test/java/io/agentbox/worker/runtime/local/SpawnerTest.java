package io.agentbox.worker.runtime.local;

import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.image.unpack.Trees;
import io.agentbox.worker.runtime.LaunchSpec;
import io.agentbox.worker.runtime.LaunchedProcess;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import static io.agentbox.worker.runtime.local.ContainerRuntimeTest.Out;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The spawner as every local sandbox's PID 1: commands forked on request keep the semantics of
 * {@code crun exec} (compared with a runtime without it), hostile requests get an error frame,
 * signals reach the command's group, and an idle spawner stays small.
 */
class SpawnerTest {
    static Path dir;
    static LocalRuntime rt;
    static final Template BASE = Template.newBuilder().setName("base").setNetwork("none").build();
    static RuntimeSandbox sandbox;

    @BeforeAll
    static void up() throws Exception {
        dir = Files.createTempDirectory(Path.of("/var/tmp"), "agentbox-spawner-");
        // the spawner is opt-in (docs/local-runtime.md#spawner): this test requires it, so that a
        // missing compiler fails here instead of testing the fallback
        String old = System.getProperty(SpawnerBinary.PROPERTY);
        System.setProperty(SpawnerBinary.PROPERTY, "required");
        try {
            rt = new LocalRuntime(dir.resolve("a"));
        } finally {
            restore(old);
        }
        assertThat(rt.hasSpawner()).isTrue();
        sandbox = rt.start("sp-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36), BASE);
    }

    private static void restore(String old) {
        if (old == null) {
            System.clearProperty(SpawnerBinary.PROPERTY);
        } else {
            System.setProperty(SpawnerBinary.PROPERTY, old);
        }
    }

    @AfterAll
    static void down() throws Exception {
        if (rt != null) {
            rt.close();
        }
        Trees.deleteRecursively(dir);
    }

    static Out sh(RuntimeSandbox s, String user, String script) throws Exception {
        return ContainerRuntimeTest.sh(s, user, script);
    }

    private Path socket() {
        return Path.of("/proc/" + ((LocalSandbox) sandbox).initPid() + "/root" + OciConfig.SPAWNER_SOCKET);
    }

    @Test
    void thePid1IsTheSpawnerAndOnlyRootInsideReachesItsSocket() throws Exception {
        assertThat(sh(sandbox, "user", "cat /proc/1/cmdline | tr '\\0' ' '").out()).isEqualTo("/.agentbox/init /.agentbox/run/spawner ");
        Out user = sh(sandbox, "user", "ls /.agentbox/run");
        assertThat(user.code()).isNotZero();
        assertThat(user.err()).contains("Permission denied");
        assertThat(sh(sandbox, "root", "ls /.agentbox/run").out()).isEqualTo("spawner\n");
    }

    @Test
    void badRequestsGetAnErrorFrameAndTheSpawnerGoesOn() throws Exception {
        assertThat(rawReply(new byte[] {'Z', 0, 0, 0, 1, 'x'})).isEqualTo("1:unknown frame type");
        assertThat(rawReply(new byte[] {'R', 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff})).isEqualTo("1:frame longer than its limit");
        byte[] noStrings = ByteBuffer.allocate(5 + 22).put((byte) 'R').putInt(22).putInt(0).putInt(0).putInt(0).putInt(1)
                .putInt(0).put(new byte[] {'x', 0}).array();
        assertThat(rawReply(noStrings)).isEqualTo("1:run request: string count does not match its header");
        byte[] stdinFirst = {'I', 0, 0, 0, 1, 'x'};
        assertThat(rawReply(stdinFirst)).isEqualTo("1:the first frame must be a run request");
        // a client that connects and goes away, and one cut off mid-frame
        SocketChannel.open(UnixDomainSocketAddress.of(socket())).close();
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(socket()))) {
            ch.write(ByteBuffer.wrap(new byte[] {'R', 0, 0, 1}));
        }
        assertThat(sh(sandbox, "user", "echo still here").out()).isEqualTo("still here\n");
    }

    /** Sends {@code bytes} raw and returns the 'F' frame's "reason:text". */
    private String rawReply(byte[] bytes) throws IOException {
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(socket()))) {
            ch.write(ByteBuffer.wrap(bytes));
            ByteBuffer in = ByteBuffer.allocate(4096);
            try {
                while (ch.read(in) >= 0) {
                    // the spawner closes the connection after the error frame
                }
            } catch (IOException e) {
                // it closed with our bytes unread: the end shows as a reset, after the frame
            }
            in.flip();
            assertThat((char) in.get()).isEqualTo('F');
            int len = in.getInt();
            int reason = in.getInt();
            byte[] text = new byte[len - 4];
            in.get(text);
            return reason + ":" + new String(text, StandardCharsets.UTF_8);
        }
    }

    @Test
    void aSignalReachesTheCommandsWholeGroup() throws Exception {
        LaunchedProcess p = sandbox.launch(new LaunchSpec("/bin/sh", List.of("-c", "sleep 100 & echo $!; sleep 100; wait"),
                Map.of(), "/", false));
        byte[] line = new byte[32];
        int n = p.stdout().read(line);
        String child = new String(line, 0, n, StandardCharsets.UTF_8).strip();
        // the command leads its own group (setsid before its exec)
        assertThat(sh(sandbox, "user", "cut -d' ' -f5,6 /proc/" + p.pid() + "/stat").out().strip())
                .isEqualTo(p.pid() + " " + p.pid());
        p.signalGroup(15);
        assertThat(p.waitFor()).isEqualTo(128 + 15);
        // the child got the signal too; it is gone once PID 1 reaped it, a moment after sh's exit
        assertThat(sh(sandbox, "user", "for i in $(seq 50); do kill -0 " + child + " 2>/dev/null || { echo gone; exit; }; "
                + "sleep 0.1; done; echo alive").out()).isEqualTo("gone\n");
        p.signalGroup(9); // after the exit: nothing, no error
    }

    @Test
    void stdinEndsWithItsCloseAndTheExitBySignalIs128PlusN() throws Exception {
        LaunchedProcess cat = sandbox.launch(new LaunchSpec("cat", List.of(), Map.of(), "/", true));
        cat.stdin().write("abc\n".getBytes(StandardCharsets.UTF_8));
        cat.stdin().write(new byte[200_000]); // more than a pipe holds: the spawner queues it
        cat.stdin().close();
        byte[] out = cat.stdout().readAllBytes();
        assertThat(cat.waitFor()).isZero();
        assertThat(out).hasSize(4 + 200_000);
        assertThat(new String(out, 0, 4, StandardCharsets.UTF_8)).isEqualTo("abc\n");

        assertThat(sh(sandbox, "user", "kill -9 $$").code()).isEqualTo(128 + 9);
        assertThat(sh(sandbox, "user", "exit 42").code()).isEqualTo(42);
    }

    @Test
    void usersGetTheirIdsCapabilitiesAndTheContainersFences() throws Exception {
        String probe = "id -u; id -g; id -G; grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status | tr -s '\\t' ' '; "
                + "cmp -s /proc/self/cgroup /proc/1/cgroup && echo in the sandbox cgroup";
        Out user = sh(sandbox, "user", probe);
        assertThat(sh(sandbox, "user", probe).out()).isEqualTo("1000\n1000\n1000\nCapEff: 0000000000000000\nNoNewPrivs: 1\n"
                + "Seccomp: 2\nin the sandbox cgroup\n");
        assertThat(sh(sandbox, "root", probe).out()).isEqualTo("0\n0\n0\nCapEff: 00000000a80425fb\nNoNewPrivs: 1\n"
                + "Seccomp: 2\nin the sandbox cgroup\n");
    }

    @Test
    void aMissingCwdIsInvalidArgumentAndAMissingCommandExits127() throws Exception {
        assertThatThrownBy(() -> sandbox.launch(new LaunchSpec("true", List.of(), Map.of(), "/nope", false)))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription()).isEqualTo("cwd '/nope' does not exist");
                });
        LaunchedProcess p = sandbox.launch(new LaunchSpec("no-such-command", List.of(), Map.of(), "/", false));
        assertThat(new String(p.stderr().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("no-such-command: command not found\n");
        assertThat(p.waitFor()).isEqualTo(127);
        // argv[0] stays as given (the crun exec wrapper passed the path it found)
        LaunchedProcess cat = sandbox.launch(new LaunchSpec("cat", List.of("/nope"), Map.of(), "/", false));
        assertThat(new String(cat.stderr().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("cat: /nope: No such file or directory\n");
        assertThat(cat.waitFor()).isEqualTo(1);
    }

    /**
     * The same commands through a runtime without the spawner (nsenter + crun exec + the busybox
     * wrapper) print the same: environment, cwd, ids, exit codes, errors.
     */
    @Test
    void commandsBehaveAsThroughCrunExec() throws Exception {
        List<LaunchSpec> specs = List.of(
                new LaunchSpec("env", List.of(), Map.of("FOO", "bar baz", "EMPTY", ""), "/tmp", false),
                new LaunchSpec("/bin/bash", List.of("-l", "-c", "pwd; echo $HOME $USER $LOGNAME; umask; ulimit -n; exit 3"),
                        Map.of(), "", false),
                new LaunchSpec("sh", List.of("-c", "id; echo err >&2; kill -TERM $$"), Map.of(), "/", false, null, "root"),
                new LaunchSpec("/bin/cat", List.of("/etc/shadow"), Map.of(), "/", false));
        List<String> withSpawner = run(sandbox, specs);
        String old = System.getProperty(SpawnerBinary.PROPERTY);
        System.setProperty(SpawnerBinary.PROPERTY, "off");
        LocalRuntime plain;
        try {
            plain = new LocalRuntime(dir.resolve("b"));
        } finally {
            restore(old);
        }
        try {
            assertThat(plain.hasSpawner()).isFalse();
            RuntimeSandbox s = plain.start(sandbox.id() + "-b", BASE);
            assertThat(run(s, specs)).isEqualTo(withSpawner);
        } finally {
            plain.close();
        }
    }

    private static List<String> run(RuntimeSandbox s, List<LaunchSpec> specs) throws Exception {
        List<String> out = new ArrayList<>();
        for (LaunchSpec spec : specs) {
            LaunchedProcess p = s.launch(spec);
            String stdout = new String(p.stdout().readAllBytes(), StandardCharsets.UTF_8);
            String stderr = new String(p.stderr().readAllBytes(), StandardCharsets.UTF_8);
            // variables in a stable order (busybox sh exported them in its own); what shells add left out
            List<String> lines = new ArrayList<>(stdout.lines().filter(l -> !l.matches("(_|SHLVL|PWD|OLDPWD)=.*")).toList());
            if (spec.cmd().equals("env")) {
                lines.sort(null);
            }
            out.add("exit " + p.waitFor() + "\n" + String.join("\n", lines) + "\nstderr:\n" + stderr);
        }
        return out;
    }

    /** Root inside may delete what it likes, the spawner's socket too (found by StrictInputTest). */
    @Test
    void commandsStillRunOnceRootRemovedTheSpawnersSocket() throws Exception {
        RuntimeSandbox s = rt.start("sp-lost-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36), BASE);
        try {
            assertThat(sh(s, "root", "rm /.agentbox/run/spawner && echo gone").out()).isEqualTo("gone\n");
            assertThat(sh(s, "user", "echo $((6 * 7)); id -u").out()).isEqualTo("42\n1000\n");
            assertThat(sh(s, "root", "id -u").out()).isEqualTo("0\n");
            // through crun exec now: the spawner is still PID 1, and reaps
            assertThat(sh(s, "user", "cat /proc/1/cmdline | tr '\\0' ' '").out()).isEqualTo("/.agentbox/init /.agentbox/run/spawner ");
            assertThat(s.isAlive()).isTrue();
        } finally {
            s.kill();
        }
    }

    /** Proportional set size of an idle sandbox's spawner (its binary's pages shared by every sandbox). */
    @Test
    void anIdleSpawnerIsSmall() throws Exception {
        List<RuntimeSandbox> idle = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                idle.add(rt.start("sp-idle-" + i, BASE));
            }
            for (RuntimeSandbox s : idle) {
                sh(s, "user", "true"); // it served a command once: buffers it used are given back
            }
            long pssKib = 0;
            long anonKib = 0;
            for (RuntimeSandbox s : idle) {
                String rollup = Files.readString(Path.of("/proc/" + ((LocalSandbox) s).initPid() + "/smaps_rollup"));
                pssKib += field(rollup, "Pss:");
                anonKib += field(rollup, "Pss_Anon:");
            }
            System.out.printf("idle spawner: Pss %d KiB, Pss_Anon %d KiB each (%d sandboxes)%n", pssKib / idle.size(),
                    anonKib / idle.size(), idle.size());
            assertThat(anonKib / idle.size()).isLessThanOrEqualTo(128);
            assertThat(pssKib / idle.size()).isLessThanOrEqualTo(512);
        } finally {
            idle.forEach(RuntimeSandbox::kill);
        }
    }

    private static long field(String rollup, String name) {
        return rollup.lines().filter(l -> l.startsWith(name)).map(l -> Long.parseLong(l.split("\\s+")[1])).findFirst().orElseThrow();
    }
}
