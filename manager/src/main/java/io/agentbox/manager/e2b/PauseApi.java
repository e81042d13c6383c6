package io.agentbox.manager.e2b;

import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.store.ApiStore;
import io.agentbox.manager.sandboxes.SandboxPauses;
import io.agentbox.manager.http.route.Reply;
import io.agentbox.manager.http.route.RouteTable;
import io.agentbox.manager.auth.EnvdTokens;
import io.agentbox.manager.auth.Principal;
import io.agentbox.protocol.v1.ResumeSandboxResponse;
import io.agentbox.protocol.v1.SandboxInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.List;

/**
 * Pause and resume on the E2B control plane (docs/e2b-wire.md#pause-and-resume):
 *
 * <ul>
 *   <li>{@code POST /sandboxes/{id}/pause}, body optional {@code {"memory": bool}} (default true):
 *       204; 409 {@code {code:409}} when already paused; 404 unknown; 400 when the sandbox's runtime
 *       cannot pause (kubernetes: no freezer for pods; E2B answers an unsupported memory mode with 400).
 *       {@code memory:false} kills the processes and keeps the files (a filesystem-only pause).</li>
 *   <li>{@code POST /v2/sandboxes/{id}/connect} and {@code POST /sandboxes/{id}/connect}, body
 *       {@code {"timeout"?: s, "memory"?: bool}}: 201 when it was paused and now runs, 200 when it
 *       ran; same sandbox id and same access token (derived from the id); end = now + timeout
 *       (default 300 s) on a resume, only ever extended on a running sandbox.
 *       {@code memory:false} on a paused sandbox drops its processes first (E2B {@code onResume:'reboot'}).</li>
 *   <li>{@code POST /sandboxes/{id}/resume} (deprecated), body optional {@code {"timeout"?: s,
 *       "memory"?: bool, "autoPause"?: bool}}: 201; 409 when it is running; timeout default 15 s
 *       (E2B's schema default for this route).</li>
 * </ul>
 */
final class PauseApi {
    /** Default lifetime of the deprecated {@code /resume} (E2B's {@code ResumedSandbox.timeout} default). */
    static final int DEPRECATED_RESUME_DEFAULT_SECONDS = 15;

    private final SandboxesApi sandboxes;
    private final SandboxPauses pauses;
    private final EnvdTokens tokens;
    private final ApiStore store;

    PauseApi(SandboxesApi sandboxes, ApiStore store, EnvdTokens tokens) {
        this.sandboxes = sandboxes;
        this.pauses = new SandboxPauses(store);
        this.tokens = tokens;
        this.store = store;
    }

    void routes(RouteTable.Builder<E2bEndpoint> routes) {
        for (String base : List.of("/sandboxes", "/v2/sandboxes")) {
            routes.add("POST", base + "/{id}/connect", c -> connect(c.who(), c.param("id"), c.body(E2bBodies.Resume.class)));
        }
        routes.add("POST", "/sandboxes/{id}/pause", c -> {
            pause(c.who(), c.param("id"), c.body(E2bBodies.Pause.class));
            return Reply.noContent();
        });
        routes.add("POST", "/sandboxes/{id}/resume", c -> resume(c.who(), c.param("id"), c.body(E2bBodies.Resume.class)));
    }

    void pause(Principal who, String sandboxId, E2bBodies.Pause body) {
        boolean memory = !Boolean.FALSE.equals(body.memory());
        SandboxesApi.Owned s = sandboxes.owned(who, sandboxId);
        try {
            pauses.pause(s.channel(), sandboxId, memory);
        } catch (StatusRuntimeException e) {
            throw error(e, sandboxId, "pause sandbox");
        }
    }

    Reply connect(Principal who, String sandboxId, E2bBodies.Resume body) {
        int timeout = SandboxesApi.timeoutSeconds(body.timeout(), "timeout", SandboxPauses.RESUME_DEFAULT_SECONDS);
        boolean memory = !Boolean.FALSE.equals(body.memory());
        SandboxesApi.Owned s = sandboxes.owned(who, sandboxId);
        boolean resumed = connect(s, timeout, memory, "connect sandbox");
        return Reply.json(resumed ? 201 : 200, E2bJson.sandbox(s.record(), sandboxes.label(s.record()), tokens.token(sandboxId)));
    }

    /**
     * A paused sandbox runs again with end = now + {@code timeout} s; a running one has its end only
     * ever extended to that. True when it was paused.
     */
    boolean connect(SandboxesApi.Owned s, int timeout, boolean memory, String what) {
        try {
            ResumeSandboxResponse r = pauses.resume(s.channel(), s.record().sandboxId(), timeout, memory);
            return r.getResumed();
        } catch (StatusRuntimeException e) {
            throw error(e, s.record().sandboxId(), what);
        }
    }

    Reply resume(Principal who, String sandboxId, E2bBodies.Resume body) {
        int timeout = SandboxesApi.timeoutSeconds(body.timeout(), "timeout", DEPRECATED_RESUME_DEFAULT_SECONDS);
        boolean memory = !Boolean.FALSE.equals(body.memory());
        SandboxesApi.Owned s = sandboxes.owned(who, sandboxId);
        if (Boolean.TRUE.equals(body.autoPause()) && !s.record().lifecycle().autoPause()) {
            throw ApiException.e2b(400, "field 'autoPause' of resume is not supported: a sandbox's auto-pause is set at "
                    + "create (lifecycle onTimeout 'pause') and kept across pause and resume");
        }
        try {
            SandboxInfo info = pauses.get(s.channel(), s.record());
            if (!"paused".equals(info.getState())) {
                throw ApiException.e2b(409, "sandbox " + sandboxId + " is already running");
            }
            pauses.resume(s.channel(), sandboxId, timeout, memory);
        } catch (StatusRuntimeException e) {
            throw error(e, sandboxId, "resume sandbox");
        }
        return Reply.json(201, E2bJson.sandbox(s.record(), sandboxes.label(s.record()), tokens.token(sandboxId)));
    }

    /** A worker error of pause or resume: gone → 404 (recorded), a runtime that cannot freeze → 400, else the common mapping. */
    private ApiException error(StatusRuntimeException e, String sandboxId, String what) {
        if (E2bErrors.sandboxGone(e)) {
            store.markEnded(sandboxId, "gone");
            return SandboxesApi.notFound(sandboxId);
        }
        if (e.getStatus().getCode() == Status.Code.UNIMPLEMENTED) {
            return ApiException.e2b(400, what + ": sandbox " + sandboxId + " runs on a runtime that cannot pause ("
                    + e.getStatus().getDescription() + "); pause needs the local runtime's cgroup freezer");
        }
        return E2bErrors.fromWorker(e, what);
    }
}
