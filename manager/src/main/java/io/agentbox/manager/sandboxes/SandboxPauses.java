package io.agentbox.manager.sandboxes;

import io.agentbox.manager.store.ApiStore;
import io.agentbox.manager.store.SandboxRecord;
import io.agentbox.protocol.v1.PauseSandboxRequest;
import io.agentbox.protocol.v1.ResumeSandboxRequest;
import io.agentbox.protocol.v1.ResumeSandboxResponse;
import io.agentbox.protocol.v1.SandboxInfo;
import io.agentbox.protocol.v1.SandboxRef;
import io.agentbox.protocol.v1.SandboxServiceGrpc;
import io.grpc.Channel;
import java.util.concurrent.TimeUnit;

/**
 * Pause and resume of a sandbox on its worker ({@code PauseSandbox}, {@code ResumeSandbox} of
 * sandbox.proto), kept in line with the hub's record: the control plane's pause and connect and
 * envd's auto-resume go through here (docs/e2b-wire.md#pause-and-resume). The worker decides; errors
 * are its {@link io.grpc.StatusRuntimeException}s, for the caller to map.
 */
public final class SandboxPauses {
    /** Lifetime after a resume when the caller gives none: E2B's connect default (docs/e2b-wire.md#resume-is-connect). */
    public static final int RESUME_DEFAULT_SECONDS = 300;
    static final long CALL_TIMEOUT_MS = 30_000;

    private final ApiStore store;

    public SandboxPauses(ApiStore store) {
        this.store = store;
    }

    /**
     * Pauses the sandbox: its processes frozen in memory, or with {@code keepMemory} false killed
     * (files kept). Records the pause.
     *
     * @return the worker's view after the pause
     */
    public SandboxInfo pause(Channel channel, String sandboxId, boolean keepMemory) {
        SandboxInfo info = stub(channel).pauseSandbox(PauseSandboxRequest.newBuilder().setSandboxId(sandboxId)
                .setDropMemory(!keepMemory).build());
        store.markPaused(sandboxId, info.getPausedAtMs() > 0 ? info.getPausedAtMs() : System.currentTimeMillis());
        return info;
    }

    /**
     * Resumes a paused sandbox with end now + {@code seconds} (decided here, once, as for a create),
     * dropping its processes first when {@code keepMemory} is false; on a running one the worker
     * only moves a later end in. Records what happened.
     */
    public ResumeSandboxResponse resume(Channel channel, String sandboxId, int seconds, boolean keepMemory) {
        long endAt = System.currentTimeMillis() + seconds * 1000L;
        ResumeSandboxResponse r = stub(channel).resumeSandbox(ResumeSandboxRequest.newBuilder().setSandboxId(sandboxId)
                .setTimeoutSeconds(seconds).setEndAtMs(endAt).setDropMemory(!keepMemory).build());
        long end = r.getSandbox().getEndAtMs() > 0 ? r.getSandbox().getEndAtMs() : endAt;
        if (r.getResumed()) {
            if (!store.markResumed(sandboxId, end)) {
                store.updateEndAt(sandboxId, end); // paused by its timer: the record did not know
            }
        } else {
            store.updateEndAt(sandboxId, end);
        }
        return r;
    }

    /** The worker's view of the sandbox; a pause the hub did not record (the worker's timer paused it) is recorded. */
    public SandboxInfo get(Channel channel, SandboxRecord record) {
        SandboxInfo info = stub(channel).getSandbox(SandboxRef.newBuilder().setSandboxId(record.sandboxId()).build());
        noteState(record, info);
        return info;
    }

    /**
     * Whether the sandbox runs now, for traffic that reaches it (envd calls, ports): a paused one
     * with auto-resume is resumed first, with end now + {@value #RESUME_DEFAULT_SECONDS} s (E2B's
     * connect default, docs/e2b-wire.md#auto-pause-and-auto-resume); false when it is paused without auto-resume.
     */
    public boolean wake(Channel channel, SandboxRecord record) {
        SandboxInfo info = get(channel, record);
        if (!"paused".equals(info.getState())) {
            return true;
        }
        if (!record.lifecycle().autoResume() && !info.getAutoResume()) {
            return false;
        }
        resume(channel, record.sandboxId(), RESUME_DEFAULT_SECONDS, true);
        return true;
    }

    /** Records a pause the worker reports and the hub's record lacks (auto-pause at the end time). */
    public void noteState(SandboxRecord record, SandboxInfo info) {
        if ("paused".equals(info.getState()) && !record.paused()) {
            store.markPaused(record.sandboxId(), info.getPausedAtMs() > 0 ? info.getPausedAtMs() : System.currentTimeMillis());
        }
    }

    private static SandboxServiceGrpc.SandboxServiceBlockingStub stub(Channel channel) {
        return SandboxServiceGrpc.newBlockingStub(channel).withDeadlineAfter(CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }
}
