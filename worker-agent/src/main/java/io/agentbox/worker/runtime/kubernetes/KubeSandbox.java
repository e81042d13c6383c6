package io.agentbox.worker.runtime.kubernetes;

import io.agentbox.protocol.ErrorReason;
import io.agentbox.worker.runtime.LaunchSpec;
import io.agentbox.worker.runtime.LaunchedProcess;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.SandboxClaim;
import io.agentbox.worker.runtime.SandboxFiles;
import io.agentbox.worker.runtime.kubernetes.exec.PodExec;
import io.agentbox.worker.runtime.shell.SandboxShell;
import io.agentbox.worker.runtime.shell.ShellFiles;
import io.agentbox.worker.runtime.shell.ShellLaunch;
import io.agentbox.worker.runtime.shell.ShellProcess;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A sandbox of the {@code kubernetes} runtime: one claimed pod, reached through {@link PodExec}.
 *
 * <p>Binding: a claim binds the sandbox to an idle pod at once; the label write that makes the
 * claim visible in the API runs later ({@code ClaimWriter}). If that write finds the pod taken
 * or gone, the sandbox is rebound to another idle pod. Every command and file operation first
 * waits until the binding is confirmed, so the client's first command always runs in the pod
 * the API records as this sandbox's — never in a pod another sandbox also holds.
 */
public final class KubeSandbox implements RuntimeSandbox, SandboxShell {
    private final SandboxClaim claim;
    private final KubePool pool;
    private final PodExec exec;
    private final Duration confirmTimeout;
    private final CompletableFuture<String> confirmed = new CompletableFuture<>();
    private final ShellFiles files = new ShellFiles(this);
    private volatile String pod;
    private final AtomicBoolean killed = new AtomicBoolean();
    private volatile boolean podGone;
    private int moves;

    KubeSandbox(SandboxClaim claim, KubePool pool, PodExec exec, Duration confirmTimeout, String pod) {
        this.claim = claim;
        this.pool = pool;
        this.exec = exec;
        this.confirmTimeout = confirmTimeout;
        this.pod = pod;
    }

    @Override
    public String id() {
        return claim.sandboxId();
    }

    SandboxClaim claim() {
        return claim;
    }

    /** The pod the sandbox is bound to now (confirmed or not). */
    public String pod() {
        return pod;
    }

    /** Completes with the pod name once the API records the claim; fails when no pod could be had. */
    public CompletableFuture<String> confirmed() {
        return confirmed;
    }

    synchronized void moveTo(String nextPod) {
        moves++;
        pod = nextPod;
        podGone = false; // the news was about the pod it leaves
    }

    synchronized int moves() {
        return moves;
    }

    void confirm(String podName) {
        confirmed.complete(podName);
    }

    void fail(String why) {
        confirmed.completeExceptionally(Status.UNAVAILABLE.withDescription(why).asRuntimeException());
    }

    /**
     * The pod {@code name} is gone or going: deleted, or carrying a deletion timestamp (a graceful
     * deletion in progress). A sandbox confirmed on it is dead from now on, even while the object
     * still exists; an unconfirmed one is moved by the claim writer instead (its write fails on
     * the changed pod).
     */
    synchronized void podGone(String name) {
        if (name.equals(pod)) {
            podGone = true;
        }
    }

    boolean killed() {
        return killed.get();
    }

    @Override
    public boolean isAlive() {
        return !killed.get() && !confirmed.isCompletedExceptionally() && !(podGone && confirmed.isDone());
    }

    @Override
    public boolean outlivesWorker() {
        return true;
    }

    /**
     * Waits for the confirmed pod.
     *
     * @throws StatusRuntimeException NOT_FOUND + SANDBOX_NOT_FOUND when the sandbox is gone (or its
     *     pod's claim failed); UNAVAILABLE when no pod was confirmed within the confirm timeout
     */
    String awaitPod() {
        if (!isAlive()) {
            throw unavailable();
        }
        try {
            return confirmed.get(confirmTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof StatusRuntimeException s ? s : unavailable();
        } catch (TimeoutException e) {
            throw Status.UNAVAILABLE.withDescription("sandbox " + id() + ": the claim of pod " + pod
                    + " was not recorded within " + confirmTimeout.toSeconds() + " s").asRuntimeException();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Status.CANCELLED.withDescription("interrupted").asRuntimeException();
        }
    }

    @Override
    public Process start(List<String> argv, boolean stdinPipe) {
        return exec.exec(pool.namespace(), awaitPod(), pool.container(), argv, stdinPipe);
    }

    @Override
    public StatusRuntimeException unavailable() {
        return ErrorReason.SANDBOX_NOT_FOUND.exception(Status.Code.NOT_FOUND,
                "sandbox " + id() + " is gone (released, or its pod was deleted)");
    }

    @Override
    public LaunchedProcess launch(LaunchSpec spec) {
        if (spec.asRoot()) {
            throw RuntimeSandbox.noRootInside(); // pods run as user: never run a root request as someone else
        }
        List<String> argv = ShellLaunch.argv(List.of(), spec);
        Process p = start(argv, spec.stdin());
        int pid = ShellLaunch.awaitPid(p, spec.cwd(), this);
        return new ShellProcess(p, pid, spec.stdin(), signal -> signalGroup(pid, signal));
    }

    private void signalGroup(int pid, int signal) {
        Process kill = start(List.of("kill", "-" + signal, "--", "-" + pid), false);
        try {
            kill.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public SandboxFiles files() {
        return files;
    }

    /** Releases the sandbox: its pod is deleted (not reused), and the pool refills. */
    @Override
    public void kill() {
        if (killed.compareAndSet(false, true)) {
            pool.release(this);
        }
    }

    @Override
    public String toString() {
        return "KubeSandbox[" + id() + " on " + pod + "]";
    }
}
