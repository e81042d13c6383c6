package io.agentbox.worker.runtime.local;

import io.agentbox.protocol.SandboxIds;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.image.unpack.Trees;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import static org.assertj.core.api.Assertions.assertThat;


/**
 * A worker JVM killed with SIGKILL (no shutdown hook, no close) must not leave its sandboxes
 * running: crun re-parents their inits to the host's init, so the runtime's namespace holder,
 * which reads a pipe from the JVM, deletes them when that pipe ends.
 */
class SandboxEndsWithWorkerTest {
    /** The child JVM: starts two sandboxes, prints their inits' host pids, then waits to be killed. */
    public static void main(String[] args) throws Exception {
        LocalRuntime runtime = new LocalRuntime(Path.of(args[0]));
        Template t = Template.newBuilder().setName("base").setNetwork("none").build();
        LocalSandbox a = (LocalSandbox) runtime.start(SandboxIds.newSandboxId("test"), t);
        LocalSandbox b = (LocalSandbox) runtime.start(SandboxIds.newSandboxId("test"), t);
        System.out.println("pids " + a.initPid() + "," + b.initPid() + " ids " + a.id() + "," + b.id());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }

    @Test
    void aKilledWorkerLeavesNoSandboxProcesses() throws Exception {
        Path dir = Files.createTempDirectory(Path.of("/var/tmp"), "agentbox-ends-with-worker-");
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), SandboxEndsWithWorkerTest.class.getName(), dir.toString())
                .redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            String line;
            while ((line = out.readLine()) != null && !line.startsWith("pids ")) {
                // log lines of the child
            }
            assertThat(line).as("child reported its sandboxes' pids").isNotNull();
            String[] parts = line.split(" ");
            List<Long> pids = java.util.Arrays.stream(parts[1].split(",")).map(Long::parseLong).toList();
            List<String> ids = List.of(parts[3].split(","));
            assertThat(pids).hasSize(2);
            assertThat(pids.stream().allMatch(p -> !Reaped.ended(p))).as("inits alive").isTrue();
            for (String id : ids) {
                assertThat(io.agentbox.worker.IsolationTestAccess.sandboxProcesses(id)).isPositive();
            }

            child.destroyForcibly(); // SIGKILL: no shutdown hook runs
            child.waitFor(10, TimeUnit.SECONDS);
            for (long pid : pids) {
                assertThat(Reaped.await(pid, 20_000)).as("sandbox init %d ended with the worker", pid).isTrue();
            }
            for (String id : ids) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (io.agentbox.worker.IsolationTestAccess.sandboxProcesses(id) > 0 && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                assertThat(io.agentbox.worker.IsolationTestAccess.sandboxProcesses(id)).as("processes of %s", id).isZero();
            }
        } finally {
            child.destroyForcibly();
            // a runtime on the same directory removes what is left, then nothing remains
            new LocalRuntime(dir).close();
            Trees.deleteRecursively(dir);
        }
    }
}
