package io.agentbox.worker.service;

import static io.agentbox.worker.service.WorkerStatus.invalid;

import io.agentbox.protocol.v1.ExecRequest;
import io.agentbox.protocol.v1.ExecStart;
import io.agentbox.protocol.v1.ProcessConfig;
import io.agentbox.worker.metrics.WorkerMeters;
import io.agentbox.worker.pool.ClaimedSandbox;
import io.agentbox.worker.pool.SandboxPools;
import io.agentbox.worker.process.ManagedProcess;
import io.agentbox.worker.runtime.LaunchSpec;
import io.agentbox.worker.runtime.TerminalSize;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One ProcessService.Exec call: the first request starts the process, later ones feed it. */
final class ExecCall implements StreamObserver<ExecRequest> {
    private static final Logger log = LoggerFactory.getLogger(ExecCall.class);

    private final SandboxPools pools;
    private final GrpcEventSink sink;
    private volatile ManagedProcess process;
    private volatile boolean killOnDisconnect;
    private volatile boolean ended;

    ExecCall(SandboxPools pools, GrpcEventSink sink) {
        this.pools = pools;
        this.sink = sink;
    }

    @Override
    public void onNext(ExecRequest req) {
        if (ended) {
            return;
        }
        try {
            if (req.getRequestCase() == ExecRequest.RequestCase.START) {
                if (process != null) {
                    throw invalid("start may only be sent once per Exec call");
                }
                start(req.getStart());
                return;
            }
            ManagedProcess p = process;
            if (p == null) {
                throw invalid("the first Exec request must carry start");
            }
            switch (req.getRequestCase()) {
                case STDIN -> p.writeStdin(req.getStdin().toByteArray());
                case CLOSE_STDIN -> p.closeStdin();
                case SIGNAL -> p.signal(ProcessServiceImpl.signalNumber(req.getSignal()));
                default -> throw invalid("empty Exec request");
            }
        } catch (StatusRuntimeException e) {
            ended = true;
            sink.fail(e);
        } catch (RuntimeException e) {
            ended = true;
            log.warn("exec failed", e);
            sink.fail(Status.INTERNAL.withDescription(e.toString()));
        }
    }

    private void start(ExecStart start) {
        ClaimedSandbox sandbox = pools.running(start.getSandboxId());
        ProcessConfig config = start.getProcess();
        if (config.getCmd().isEmpty()) {
            throw invalid("process.cmd is required");
        }
        Map<String, String> env = new LinkedHashMap<>(sandbox.effectiveEnv());
        env.putAll(config.getEnvsMap());
        String user = config.getUser().isEmpty() ? sandbox.runtime().defaultUser() : SandboxUsers.require(config.getUser());
        // no cwd: the template's WORKDIR (E2B's default workdir, docs/e2b-wire.md#sandbox-defaults), else the user's home
        String cwd = config.getCwd().isEmpty() && !sandbox.runtime().defaultWorkdir().isEmpty()
                ? sandbox.runtime().defaultWorkdir()
                : SandboxPaths.resolve(config.getCwd(), SandboxUsers.home(user), true, "cwd");
        TerminalSize pty = start.hasPty() ? new TerminalSize(start.getPty().getCols(), start.getPty().getRows()) : null;
        // a terminal's input is the stdin pipe
        LaunchSpec spec = new LaunchSpec(config.getCmd(), config.getArgsList(), env, cwd,
                start.getStdin() || pty != null, pty, user);
        killOnDisconnect = start.getKillOnDisconnect();
        process = sandbox.processes().start(spec, config, start.getTag(), sink, start.getTimeoutMs());
        pools.meters().exec(WorkerMeters.templateLabel(sandbox.template()), 1);
    }

    @Override
    public void onError(Throwable t) {
        disconnected();
    }

    @Override
    public void onCompleted() {
        // half-close: the client sends no more input; output keeps flowing until exit
    }

    /** The client went away: stop sending; kill the process if the start asked for it. */
    void disconnected() {
        ended = true;
        sink.cancelled();
        ManagedProcess p = process;
        if (p != null) {
            p.detach(sink);
            if (killOnDisconnect && p.isRunning()) {
                p.signal(9);
            }
        }
    }
}
