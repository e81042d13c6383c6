package io.agentbox.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.protocol.ErrorReason;
import io.agentbox.protocol.v1.CreateSandboxRequest;
import io.agentbox.protocol.v1.ExecRequest;
import io.agentbox.protocol.v1.ExecStart;
import io.agentbox.protocol.v1.ListDirRequest;
import io.agentbox.protocol.v1.PathRequest;
import io.agentbox.protocol.v1.PauseSandboxRequest;
import io.agentbox.protocol.v1.PoolCapacity;
import io.agentbox.protocol.v1.ProcessConfig;
import io.agentbox.protocol.v1.ResumeSandboxRequest;
import io.agentbox.protocol.v1.ResumeSandboxResponse;
import io.agentbox.protocol.v1.SandboxInfo;
import io.agentbox.protocol.v1.SandboxRef;
import io.agentbox.protocol.v1.SetTimeoutRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Pause and resume on real crun sandboxes (cgroup freezer): a paused sandbox's processes stop
 * where they stand and go on with the same pids, calls that reach into it fail at once with
 * SANDBOX_PAUSED, its end time no longer applies, and auto-pause turns the timer's kill into a pause.
 */
class PauseResumeTest {
    static WorkerFixture w;

    @BeforeAll
    static void up() throws Exception {
        w = new WorkerFixture(WorkerFixture.template("base", 2));
    }

    @AfterAll
    static void down() throws Exception {
        w.close();
    }

    private static SandboxRef ref(String id) {
        return SandboxRef.newBuilder().setSandboxId(id).build();
    }

    private static SandboxInfo pause(String id, boolean dropMemory) {
        return w.sandboxes.pauseSandbox(PauseSandboxRequest.newBuilder().setSandboxId(id).setDropMemory(dropMemory).build());
    }

    private static ResumeSandboxResponse resume(String id, int seconds) {
        return w.sandboxes.resumeSandbox(ResumeSandboxRequest.newBuilder().setSandboxId(id).setTimeoutSeconds(seconds).build());
    }

    private static void fails(Runnable call, Status.Code code, ErrorReason reason) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).as(e.getStatus().toString()).isEqualTo(code);
            assertThat(ErrorReason.of(e)).contains(reason);
        });
    }

    private static long counter(String id) {
        return Long.parseLong(w.run(id, "cat /tmp/counter").stdout().strip());
    }

    @Test
    void pauseStopsEveryProcessAndResumeContinuesItWithTheSamePid() throws Exception {
        String id = w.create();
        WorkerFixture.Collector c = new WorkerFixture.Collector();
        var call = w.processesAsync.exec(c);
        call.onNext(ExecRequest.newBuilder().setStart(ExecStart.newBuilder().setSandboxId(id).setProcess(ProcessConfig.newBuilder()
                .setCmd("/bin/bash").addArgs("-c")
                .addArgs("i=0; while :; do i=$((i+1)); echo $i > /tmp/counter.new; mv /tmp/counter.new /tmp/counter; sleep 0.02; done")))
                .build());
        int pid = c.started.orTimeout(10, TimeUnit.SECONDS).join();
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> w.run(id, "cat /tmp/counter 2>/dev/null").stdout().strip()
                .matches("[0-9]+"));

        long before = counter(id);
        SandboxInfo paused = pause(id, false);
        assertThat(paused.getState()).isEqualTo("paused");
        assertThat(paused.getMemoryKept()).isTrue();
        assertThat(paused.getPausedAtMs()).isPositive();
        Thread.sleep(1500);
        ResumeSandboxResponse r = resume(id, 120);
        long afterResume = counter(id);
        // about 50 increments a second while running; frozen for 1.5 s it must not have moved on
        // more than the few steps around the two reads
        assertThat(afterResume - before).as("increments across a 1.5 s pause").isLessThan(25);
        assertThat(r.getResumed()).isTrue();
        assertThat(r.getSandbox().getState()).isEqualTo("running");
        assertThat(r.getSandbox().getPausedAtMs()).isZero();
        assertThat(r.getSandbox().getEndAtMs()).isBetween(System.currentTimeMillis() + 110_000, System.currentTimeMillis() + 121_000);
        Thread.sleep(1000);
        assertThat(counter(id) - afterResume).as("increments in a second after the resume").isGreaterThan(10);
        assertThat(w.processes.listProcesses(ref(id)).getProcessesList()).anySatisfy(p -> assertThat(p.getPid()).isEqualTo(pid));
        assertThat(c.result).isNotDone();

        // resume of a running sandbox: nothing to thaw, a later end moves in, an earlier one does not
        long end = r.getSandbox().getEndAtMs();
        ResumeSandboxResponse again = resume(id, 30);
        assertThat(again.getResumed()).isFalse();
        assertThat(again.getSandbox().getEndAtMs()).isEqualTo(end);
        assertThat(resume(id, 600).getSandbox().getEndAtMs()).isGreaterThan(end);
        w.sandboxes.killSandbox(ref(id));
    }

    @Test
    void aShellStartingCommandsInALoopIsPausedEveryTime() {
        // a shell waiting for a vfork child that froze before its exec cannot freeze on cgroup v1:
        // without the thaw-and-retry of Cgroups.freeze a pause soon stuck in FREEZING for good
        String id = w.create();
        WorkerFixture.Collector c = new WorkerFixture.Collector();
        w.processesAsync.exec(c).onNext(ExecRequest.newBuilder().setStart(ExecStart.newBuilder().setSandboxId(id).setProcess(
                ProcessConfig.newBuilder().setCmd("/bin/sh").addArgs("-c").addArgs("while :; do /bin/true; done"))).build());
        c.started.orTimeout(10, TimeUnit.SECONDS).join();
        for (int i = 0; i < 100; i++) {
            assertThat(pause(id, false).getState()).isEqualTo("paused");
            assertThat(resume(id, 60).getResumed()).isTrue();
        }
        assertThat(w.run(id, "echo alive").stdout()).isEqualTo("alive\n");
        w.sandboxes.killSandbox(ref(id));
    }

    @Test
    void aPausedSandboxRefusesCommandsFilesAndPortsAtOnceAndCanBeKilled() {
        String id = w.create();
        w.run(id, "echo kept > /tmp/f");
        pause(id, false);
        fails(() -> pause(id, false), Status.Code.FAILED_PRECONDITION, ErrorReason.SANDBOX_CONFLICT);
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> w.run(id, "true")).satisfies(e -> {
            StatusRuntimeException s = (StatusRuntimeException) (e instanceof StatusRuntimeException ? e : e.getCause());
            assertThat(s.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
            assertThat(ErrorReason.of(s)).contains(ErrorReason.SANDBOX_PAUSED);
        });
        fails(() -> w.files.stat(PathRequest.newBuilder().setSandboxId(id).setPath("/tmp/f").build()),
                Status.Code.FAILED_PRECONDITION, ErrorReason.SANDBOX_PAUSED);
        fails(() -> w.files.listDir(ListDirRequest.newBuilder().setSandboxId(id).setPath("/tmp").build()),
                Status.Code.FAILED_PRECONDITION, ErrorReason.SANDBOX_PAUSED);
        fails(() -> w.processes.listProcesses(ref(id)), Status.Code.FAILED_PRECONDITION, ErrorReason.SANDBOX_PAUSED);
        fails(() -> w.sandboxes.setTimeout(SetTimeoutRequest.newBuilder().setSandboxId(id).setTimeoutSeconds(60).build()),
                Status.Code.FAILED_PRECONDITION, ErrorReason.SANDBOX_PAUSED);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).as("refusals do not wait").isLessThan(3000);

        assertThat(w.sandboxes.getSandbox(ref(id)).getState()).isEqualTo("paused");
        assertThat(w.sandboxes.listSandboxes(io.agentbox.protocol.v1.ListSandboxesRequest.getDefaultInstance()).getSandboxesList())
                .anySatisfy(s -> {
                    assertThat(s.getSandboxId()).isEqualTo(id);
                    assertThat(s.getState()).isEqualTo("paused");
                });
        PoolCapacity cap = w.host.capacity().stream().filter(p -> p.getTemplate().equals("base")).findFirst().orElseThrow();
        assertThat(cap.getPaused()).isGreaterThanOrEqualTo(1);
        assertThat(cap.getRunning()).as("paused sandboxes still hold their slot").isGreaterThanOrEqualTo(cap.getPaused());

        w.sandboxes.killSandbox(ref(id)); // frozen: kill thaws first
        fails(() -> w.sandboxes.getSandbox(ref(id)), Status.Code.NOT_FOUND, ErrorReason.SANDBOX_NOT_FOUND);
        fails(() -> pause("nope", false), Status.Code.NOT_FOUND, ErrorReason.SANDBOX_NOT_FOUND);
        fails(() -> resume("nope", 10), Status.Code.NOT_FOUND, ErrorReason.SANDBOX_NOT_FOUND);
    }

    @Test
    void aPauseThatDropsMemoryKillsTheProcessesAndKeepsTheFiles() {
        String id = w.create();
        w.run(id, "echo kept > /tmp/f");
        WorkerFixture.Collector c = new WorkerFixture.Collector();
        var call = w.processesAsync.exec(c);
        call.onNext(ExecRequest.newBuilder().setStart(ExecStart.newBuilder().setSandboxId(id).setProcess(ProcessConfig.newBuilder()
                .setCmd("/bin/sleep").addArgs("3600"))).build());
        c.started.orTimeout(10, TimeUnit.SECONDS).join();
        SandboxInfo p = pause(id, true);
        assertThat(p.getMemoryKept()).isFalse();
        assertThat(c.result.orTimeout(10, TimeUnit.SECONDS).join().exited().getStatus()).isEqualTo("signal: killed");
        assertThat(resume(id, 60).getResumed()).isTrue();
        assertThat(w.run(id, "cat /tmp/f").stdout()).isEqualTo("kept\n");
        assertThat(w.run(id, "ps -eo args | grep -c '^/bin/sleep 3600$' || true").stdout().strip()).isEqualTo("0");
        assertThat(w.processes.listProcesses(ref(id)).getProcessesCount()).isZero();

        // a resume that reboots a memory pause drops the processes too
        WorkerFixture.Collector c2 = new WorkerFixture.Collector();
        w.processesAsync.exec(c2).onNext(ExecRequest.newBuilder().setStart(ExecStart.newBuilder().setSandboxId(id).setProcess(
                ProcessConfig.newBuilder().setCmd("/bin/sleep").addArgs("3600"))).build());
        c2.started.orTimeout(10, TimeUnit.SECONDS).join();
        pause(id, false);
        assertThat(w.sandboxes.resumeSandbox(ResumeSandboxRequest.newBuilder().setSandboxId(id).setDropMemory(true).build())
                .getResumed()).isTrue();
        assertThat(c2.result.orTimeout(10, TimeUnit.SECONDS).join().exited().getStatus()).isEqualTo("signal: killed");
        assertThat(w.run(id, "cat /tmp/f").stdout()).isEqualTo("kept\n");
        w.sandboxes.killSandbox(ref(id));
    }

    @Test
    void theTimerPausesAnAutoPauseSandboxAndKillsAPlainOneAndAPausedOneOutlivesItsEnd() throws Exception {
        long end = System.currentTimeMillis() + 1500;
        String auto = w.sandboxes.createSandbox(CreateSandboxRequest.newBuilder().setTemplate("base").setEndAtMs(end)
                .setAutoPause(true).setAutoResume(true).setOwner("t").build()).getSandboxId();
        String plain = w.sandboxes.createSandbox(CreateSandboxRequest.newBuilder().setTemplate("base").setEndAtMs(end)
                .setOwner("t").build()).getSandboxId();
        SandboxInfo info = w.sandboxes.getSandbox(ref(auto));
        assertThat(info.getAutoPause()).isTrue();
        assertThat(info.getAutoResume()).isTrue();
        w.run(auto, "echo before > /tmp/f");
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> w.sandboxes.getSandbox(ref(auto)).getState().equals("paused"));
        Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                fails(() -> w.sandboxes.getSandbox(ref(plain)), Status.Code.NOT_FOUND, ErrorReason.SANDBOX_NOT_FOUND));
        Thread.sleep(1000); // well past its end: still paused, not reaped
        SandboxInfo stillPaused = w.sandboxes.getSandbox(ref(auto));
        assertThat(stillPaused.getState()).isEqualTo("paused");
        assertThat(stillPaused.getMemoryKept()).isTrue();

        ResumeSandboxResponse r = resume(auto, 30);
        assertThat(r.getResumed()).isTrue();
        assertThat(r.getSandbox().getAutoPause()).as("the lifecycle survives a resume (E2B #875)").isTrue();
        assertThat(w.run(auto, "cat /tmp/f").stdout()).isEqualTo("before\n");
        w.sandboxes.killSandbox(ref(auto));
    }
}
