package io.agentbox.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.protocol.v1.AttachProcessRequest;
import io.agentbox.protocol.v1.ExecRequest;
import io.agentbox.protocol.v1.ExecStart;
import io.agentbox.protocol.v1.ProcessConfig;
import io.agentbox.protocol.v1.ProcessRef;
import io.agentbox.protocol.v1.SandboxRef;
import io.agentbox.protocol.v1.SendInputRequest;
import io.agentbox.protocol.v1.Signal;
import io.agentbox.protocol.v1.SignalProcessRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class ExecServiceTest {
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
    void stdoutAndStderrAreSeparatedAndExitCodeIsReported() {
        String id = w.create();
        WorkerFixture.Result r = w.run(id, "echo out; echo err >&2; exit 3");
        assertThat(r.stdout()).isEqualTo("out\n");
        assertThat(r.stderr()).isEqualTo("err\n");
        assertThat(r.exitCode()).isEqualTo(3);
        assertThat(r.exited().getExited()).isTrue();
        assertThat(r.exited().getStatus()).isEqualTo("exit status 3");
        assertThat(r.exited().getError()).isEqualTo("exit status 3");
        assertThat(r.pid()).isPositive();
        WorkerFixture.Result ok = w.run(id, "true");
        assertThat(ok.exitCode()).isZero();
        assertThat(ok.exited().getError()).isEmpty();
    }

    @Test
    void runsAsUserWithHomeAndEnvPrecedence() {
        String id = w.create(Map.of("E", "from-create", "C", "from-create"));
        WorkerFixture.Result r = w.run(ExecStart.newBuilder().setSandboxId(id).setProcess(ProcessConfig.newBuilder()
                .setCmd("/bin/bash").addArgs("-l").addArgs("-c")
                .addArgs("echo $(id -u) $(id -un) $HOME $USER $LOGNAME $PWD E=$E C=$C T=$TEMPLATE_VAR")
                .putEnvs("C", "per-cmd")).build());
        assertThat(r.stdout().strip())
                .isEqualTo("1000 user /home/user user user /home/user E=from-create C=per-cmd T=from-template");
    }

    @Test
    void rootRunsAsUid0WithHomeRootAndMayWriteWhatUserMayNot() {
        String id = w.create(Map.of("E", "from-create"));
        WorkerFixture.Result r = w.run(ExecStart.newBuilder().setSandboxId(id).setProcess(ProcessConfig.newBuilder()
                .setUser("root").setCmd("/bin/bash").addArgs("-l").addArgs("-c")
                .addArgs("echo $(id -u) $(id -un) $HOME $USER $LOGNAME $PWD E=$E; touch /etc/by-root && stat -c %U /etc/by-root"))
                .build());
        assertThat(r.stdout()).isEqualTo("0 root /root root root /root E=from-create\nroot\n");
        assertThat(r.exitCode()).isZero();
        // a relative cwd resolves against the runner's home: /root for root, /home/user for user
        w.run(ExecStart.newBuilder().setSandboxId(id).setProcess(ProcessConfig.newBuilder().setUser("root")
                .setCmd("/bin/mkdir").addArgs("/root/sub")).build());
        assertThat(w.run(ExecStart.newBuilder().setSandboxId(id).setProcess(ProcessConfig.newBuilder().setUser("root")
                .setCmd("/bin/pwd").setCwd("sub")).build()).stdout()).isEqualTo("/root/sub\n");
        assertThat(w.run(ExecStart.newBuilder().setSandboxId(id).setProcess(ProcessConfig.newBuilder()
                .setCmd("/bin/pwd").setCwd("~")).build()).stdout()).isEqualTo("/home/user\n");
        // what root wrote, user sees but may not write; the default user is uid 1000
        WorkerFixture.Result user = w.run(id, "id -u; cat /etc/by-root && echo readable; touch /etc/by-user");
        assertThat(user.stdout()).isEqualTo("1000\nreadable\n");
        assertThat(user.stderr()).contains("Permission denied");
        assertThat(user.exitCode()).isNotZero();
        assertThat(w.run(ExecStart.newBuilder().setSandboxId(id).setProcess(ProcessConfig.newBuilder().setUser("user")
                .setCmd("/usr/bin/id").addArgs("-un")).build()).stdout()).isEqualTo("user\n");
    }

    @Test
    void anUnknownUserIsUnauthenticatedNamingIt() {
        String id = w.create();
        assertThatThrownBy(() -> w.run(ExecStart.newBuilder().setSandboxId(id).setProcess(ProcessConfig.newBuilder()
                .setUser("nobody-here").setCmd("/usr/bin/id")).build()))
                .isInstanceOf(CompletionException.class)
                .cause().isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
                    assertThat(e.getStatus().getDescription()).startsWith("user 'nobody-here' does not exist in this sandbox");
                });
        assertThat(w.processes.listProcesses(SandboxRef.newBuilder().setSandboxId(id).build()).getProcessesList())
                .as("nothing was started").isEmpty();
    }

    @Test
    void cwdIsHonouredAndMissingCwdIsInvalidArgument() {
        String id = w.create();
        WorkerFixture.Result r = w.run(ExecStart.newBuilder().setSandboxId(id).setProcess(ProcessConfig.newBuilder()
                .setCmd("/bin/pwd").setCwd("/tmp")).build());
        assertThat(r.stdout()).isEqualTo("/tmp\n");
        assertThatThrownBy(() -> w.run(ExecStart.newBuilder().setSandboxId(id).setProcess(ProcessConfig.newBuilder()
                .setCmd("/bin/pwd").setCwd("/nope")).build()))
                .isInstanceOf(CompletionException.class)
                .cause().isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription()).isEqualTo("cwd '/nope' does not exist");
                });
    }

    @Test
    void outputArrivesWhileTheCommandRuns() {
        String id = w.create();
        WorkerFixture.Collector c = new WorkerFixture.Collector();
        StreamObserver<ExecRequest> req = w.processesAsync.exec(c);
        req.onNext(ExecRequest.newBuilder().setStart(ExecStart.newBuilder().setSandboxId(id).setProcess(
                ProcessConfig.newBuilder().setCmd("/bin/sh").addArgs("-c").addArgs("echo first; sleep 30; echo never"))).build());
        assertThat(c.firstStdout.orTimeout(10, TimeUnit.SECONDS).join()).isEqualTo("first\n");
        assertThat(c.result).isNotDone();
        req.onNext(ExecRequest.newBuilder().setSignal(Signal.SIGNAL_SIGKILL).build());
        WorkerFixture.Result r = c.result.orTimeout(10, TimeUnit.SECONDS).join();
        assertThat(r.exitCode()).isEqualTo(-1);
        assertThat(r.exited().getExited()).isFalse();
        assertThat(r.exited().getStatus()).isEqualTo("signal: killed");
        assertThat(r.stdout()).isEqualTo("first\n");
    }

    @Test
    void signalProcessKillsTheGroupAndUnknownPidIsNotFound() {
        String id = w.create();
        WorkerFixture.Collector c = new WorkerFixture.Collector();
        StreamObserver<ExecRequest> req = w.processesAsync.exec(c);
        req.onNext(ExecRequest.newBuilder().setStart(ExecStart.newBuilder().setSandboxId(id).setTag("sleeper")
                .setProcess(ProcessConfig.newBuilder().setCmd("/bin/bash").addArgs("-c")
                        .addArgs("sleep 100 & sleep 100; wait"))).build());
        int pid = c.started.orTimeout(10, TimeUnit.SECONDS).join();
        assertThat(w.processes.listProcesses(SandboxRef.newBuilder().setSandboxId(id).build()).getProcessesList())
                .anySatisfy(p -> {
                    assertThat(p.getPid()).isEqualTo(pid);
                    assertThat(p.getTag()).isEqualTo("sleeper");
                    assertThat(p.getConfig().getCmd()).isEqualTo("/bin/bash");
                });
        w.processes.signalProcess(SignalProcessRequest.newBuilder().setSignal(Signal.SIGNAL_SIGTERM)
                .setProcess(ProcessRef.newBuilder().setSandboxId(id).setPid(pid)).build());
        WorkerFixture.Result r = c.result.orTimeout(10, TimeUnit.SECONDS).join();
        assertThat(r.exitCode()).isEqualTo(-1);
        assertThat(r.exited().getStatus()).isEqualTo("signal: terminated");
        // the background sleep of the same group is gone too
        assertThat(w.run(id, "ps -eo args | grep -c '^sleep 100$' || true").stdout().strip()).isEqualTo("0");
        assertThatThrownBy(() -> w.processes.signalProcess(SignalProcessRequest.newBuilder()
                .setSignal(Signal.SIGNAL_SIGKILL).setProcess(ProcessRef.newBuilder().setSandboxId(id).setPid(pid)).build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
    }

    @Test
    void timeoutKillsTheProcess() {
        String id = w.create();
        long t0 = System.nanoTime();
        WorkerFixture.Result r = w.run(ExecStart.newBuilder().setSandboxId(id).setTimeoutMs(500).setProcess(
                ProcessConfig.newBuilder().setCmd("/bin/sleep").addArgs("30")).build());
        assertThat(r.exitCode()).isEqualTo(-1);
        assertThat(r.exited().getStatus()).isEqualTo("signal: killed");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isLessThan(10_000);
    }

    @Test
    void cancellingExecKeepsTheProcessAndAttachSeesTheRest() {
        String id = w.create();
        WorkerFixture.Collector c = new WorkerFixture.Collector();
        var call = w.processesAsync.exec(c);
        call.onNext(ExecRequest.newBuilder().setStart(ExecStart.newBuilder().setSandboxId(id).setStdin(true).setProcess(
                ProcessConfig.newBuilder().setCmd("/bin/sh").addArgs("-c").addArgs("read line; echo got $line"))).build());
        int pid = c.started.orTimeout(10, TimeUnit.SECONDS).join();
        call.onError(Status.CANCELLED.asRuntimeException()); // client disconnects
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(5)).until(() ->
                w.processes.listProcesses(SandboxRef.newBuilder().setSandboxId(id).build()).getProcessesCount() == 1);
        WorkerFixture.Collector attached = new WorkerFixture.Collector();
        w.processesAsync.attachProcess(AttachProcessRequest.newBuilder().setSandboxId(id).setPid(pid).build(), attached);
        assertThat(attached.started.orTimeout(10, TimeUnit.SECONDS).join()).isEqualTo(pid);
        w.processes.sendInput(SendInputRequest.newBuilder().setProcess(ProcessRef.newBuilder().setSandboxId(id).setPid(pid))
                .setStdin(com.google.protobuf.ByteString.copyFromUtf8("hello\n")).build());
        WorkerFixture.Result r = attached.result.orTimeout(10, TimeUnit.SECONDS).join();
        assertThat(r.stdout()).isEqualTo("got hello\n");
        assertThat(r.exitCode()).isZero();
    }

    @Test
    void attachStreamsOnlyNewOutputByDefault() {
        String id = w.create();
        int pid = startDetachedThenPrint(id, "unseen-1");
        WorkerFixture.Collector live = new WorkerFixture.Collector();
        w.processesAsync.attachProcess(AttachProcessRequest.newBuilder().setSandboxId(id).setPid(pid).build(), live);
        assertThat(live.started.orTimeout(10, TimeUnit.SECONDS).join()).isEqualTo(pid);
        sendLine(id, pid, "live");
        WorkerFixture.Result r = live.result.orTimeout(10, TimeUnit.SECONDS).join();
        assertThat(r.stdout()).isEqualTo("live\n"); // not the output written before it attached
        assertThat(r.exitCode()).isZero();
    }

    @Test
    void attachWithReplayGetsTheOutputKeptWhileNobodyWasAttached() {
        String id = w.create();
        int pid = startDetachedThenPrint(id, "unseen-2");
        WorkerFixture.Collector replaying = new WorkerFixture.Collector();
        w.processesAsync.attachProcess(AttachProcessRequest.newBuilder().setSandboxId(id).setPid(pid).setReplay(true).build(),
                replaying);
        assertThat(replaying.started.orTimeout(10, TimeUnit.SECONDS).join()).isEqualTo(pid);
        sendLine(id, pid, "live");
        WorkerFixture.Result r = replaying.result.orTimeout(10, TimeUnit.SECONDS).join();
        assertThat(r.stdout()).isEqualTo("unseen-2\nlive\n");
    }

    /**
     * Starts a command whose client goes away at once; a second later, with nobody attached, it
     * prints {@code line}, then echoes one line of stdin and exits. Returns its pid once
     * {@code line} was printed (and had time to be read from the pipe).
     */
    private static int startDetachedThenPrint(String id, String line) {
        WorkerFixture.Collector c = new WorkerFixture.Collector();
        var call = w.processesAsync.exec(c);
        String marker = "/home/user/printed-" + line;
        call.onNext(ExecRequest.newBuilder().setStart(ExecStart.newBuilder().setSandboxId(id).setStdin(true).setProcess(
                ProcessConfig.newBuilder().setCmd("/bin/sh").addArgs("-c")
                        .addArgs("sleep 1; echo " + line + "; touch " + marker + "; read l; echo \"$l\""))).build());
        int pid = c.started.orTimeout(10, TimeUnit.SECONDS).join();
        call.onError(Status.CANCELLED.asRuntimeException()); // the only client leaves before any output
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20))
                .until(() -> w.run(id, "test -e " + marker).exitCode() == 0);
        try {
            Thread.sleep(500); // the worker reads the pipe as soon as the line is in it
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        assertThat(c.events).as("the first client saw only started").hasSize(1);
        return pid;
    }

    private static void sendLine(String id, int pid, String line) {
        w.processes.sendInput(SendInputRequest.newBuilder().setProcess(ProcessRef.newBuilder().setSandboxId(id).setPid(pid))
                .setStdin(com.google.protobuf.ByteString.copyFromUtf8(line + "\n")).build());
    }

    @Test
    void killOnDisconnectKillsTheProcess() {
        String id = w.create();
        WorkerFixture.Collector c = new WorkerFixture.Collector();
        var call = w.processesAsync.exec(c);
        call.onNext(ExecRequest.newBuilder().setStart(ExecStart.newBuilder().setSandboxId(id).setKillOnDisconnect(true)
                .setProcess(ProcessConfig.newBuilder().setCmd("/bin/sleep").addArgs("60"))).build());
        c.started.orTimeout(10, TimeUnit.SECONDS).join();
        call.onError(Status.CANCELLED.asRuntimeException());
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(5)).until(() ->
                w.processes.listProcesses(SandboxRef.newBuilder().setSandboxId(id).build()).getProcessesCount() == 0);
    }

    @Test
    void unknownSandboxIsNotFound() {
        assertThatThrownBy(() -> w.run("zzzzzzzzzzzz-test", "true"))
                .cause().isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
        assertThatThrownBy(() -> w.sandboxes.getSandbox(SandboxRef.newBuilder().setSandboxId("zzzzzzzzzzzz-test").build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
    }
}
