package io.agentbox.worker.runtime.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.protocol.SandboxIds;
import io.agentbox.protocol.v1.Template;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A worker JVM killed with SIGKILL (no shutdown hook, no close) must not leave its sandboxes
 * running: their init reads a pipe from the JVM and ends at its end-of-file.
 */
class SandboxEndsWithWorkerTest {
    /** The child JVM: starts one sandbox, prints its processes' pids, then waits to be killed. */
    public static void main(String[] args) throws Exception {
        LocalRuntime runtime = new LocalRuntime(Path.of(args[0]));
        runtime.start(SandboxIds.newSandboxId("test"), Template.newBuilder().setName("base").build());
        String mine = runtime.sandboxesDir() + "/";
        List<Long> pids = ProcessHandle.current().descendants()
                .filter(h -> h.info().arguments().map(a -> String.join(" ", a).contains(mine)).orElse(false)
                        || h.info().command().map(c -> c.endsWith("/cat")).orElse(false))
                .map(ProcessHandle::pid).toList();
        System.out.println("pids " + pids.stream().map(String::valueOf).reduce((a, b) -> a + "," + b).orElse(""));
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }

    @Test
    void aKilledWorkerLeavesNoSandboxProcesses() throws Exception {
        Path dir = Files.createTempDirectory(Path.of("/tmp"), "agentbox-ends-with-worker-");
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), SandboxEndsWithWorkerTest.class.getName(), dir.toString())
                .redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            String line;
            while ((line = out.readLine()) != null && !line.startsWith("pids ")) {
                // log lines of the child
            }
            assertThat(line).as("child reported its sandbox's pids").isNotNull();
            List<Long> pids = java.util.Arrays.stream(line.substring(5).split(",")).filter(s -> !s.isEmpty())
                    .map(Long::parseLong).toList();
            assertThat(pids).as("bubblewrap, its init and cat").hasSizeGreaterThanOrEqualTo(3);
            assertThat(pids.stream().allMatch(p -> ProcessHandle.of(p).map(ProcessHandle::isAlive).orElse(false))).isTrue();

            child.destroyForcibly(); // SIGKILL: no shutdown hook runs
            child.waitFor(10, TimeUnit.SECONDS);
            for (long pid : pids) {
                assertThat(Reaped.await(pid, 10_000)).as("sandbox process %d ended with the worker", pid).isTrue();
            }
        } finally {
            child.destroyForcibly();
            LayerDirs.deleteTree(dir);
        }
    }
}
