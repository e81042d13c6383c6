package io.agentbox.worker.service;

import static io.agentbox.worker.service.WorkerStatus.invalid;
import static io.agentbox.worker.service.WorkerStatus.toStatus;
import static io.agentbox.worker.service.WorkerStatus.unary;

import io.agentbox.protocol.ErrorReason;
import io.agentbox.protocol.v1.AttachProcessRequest;
import io.agentbox.protocol.v1.ExecEvent;
import io.agentbox.protocol.v1.ExecRequest;
import io.agentbox.protocol.v1.ListProcessesResponse;
import io.agentbox.protocol.v1.ProcessRef;
import io.agentbox.protocol.v1.ProcessServiceGrpc;
import io.agentbox.protocol.v1.SandboxRef;
import io.agentbox.protocol.v1.SendInputRequest;
import io.agentbox.protocol.v1.SendInputResponse;
import io.agentbox.protocol.v1.Signal;
import io.agentbox.protocol.v1.SignalProcessRequest;
import io.agentbox.protocol.v1.SignalProcessResponse;
import io.agentbox.protocol.v1.UpdateProcessRequest;
import io.agentbox.protocol.v1.UpdateProcessResponse;
import io.agentbox.worker.pool.SandboxPools;
import io.agentbox.worker.process.ManagedProcess;
import io.agentbox.worker.runtime.TerminalSize;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

/**
 * process.proto's {@code ProcessService}: processes in running sandboxes, with envd's process
 * semantics (docs/e2b-wire.md#process-service). Errors as worker_common.proto ({@link WorkerStatus}).
 */
final class ProcessServiceImpl extends ProcessServiceGrpc.ProcessServiceImplBase {
    private final SandboxPools pools;

    ProcessServiceImpl(SandboxPools pools) {
        this.pools = pools;
    }

    @Override
    public StreamObserver<ExecRequest> exec(StreamObserver<ExecEvent> responses) {
        ServerCallStreamObserver<ExecEvent> call = (ServerCallStreamObserver<ExecEvent>) responses;
        ExecCall exec = new ExecCall(pools, new GrpcEventSink(call));
        call.setOnCancelHandler(exec::disconnected);
        return exec;
    }

    @Override
    public void attachProcess(AttachProcessRequest req, StreamObserver<ExecEvent> responses) {
        ServerCallStreamObserver<ExecEvent> call = (ServerCallStreamObserver<ExecEvent>) responses;
        try {
            ProcessRef ref = switch (req.getSelectorCase()) {
                case PID -> ProcessRef.newBuilder().setSandboxId(req.getSandboxId()).setPid(req.getPid()).build();
                case TAG -> ProcessRef.newBuilder().setSandboxId(req.getSandboxId()).setTag(req.getTag()).build();
                default -> ProcessRef.newBuilder().setSandboxId(req.getSandboxId()).build(); // find() refuses it
            };
            ManagedProcess p = pools.running(req.getSandboxId()).processes().find(ref);
            GrpcEventSink sink = new GrpcEventSink(call);
            call.setOnCancelHandler(() -> {
                sink.cancelled();
                p.detach(sink);
            });
            if (!p.attach(sink, req.getReplay())) {
                throw ErrorReason.PROCESS_NOT_FOUND.exception(Status.Code.NOT_FOUND, "process " + p.pid() + " has exited");
            }
        } catch (RuntimeException e) {
            responses.onError(toStatus(e));
        }
    }

    @Override
    public void listProcesses(SandboxRef req, StreamObserver<ListProcessesResponse> out) {
        unary(out, () -> ListProcessesResponse.newBuilder()
                .addAllProcesses(pools.running(req.getSandboxId()).processes().list()).build());
    }

    @Override
    public void sendInput(SendInputRequest req, StreamObserver<SendInputResponse> out) {
        unary(out, () -> {
            ManagedProcess p = find(req.getProcess());
            if (!req.getStdin().isEmpty()) {
                p.writeStdin(req.getStdin().toByteArray());
            }
            if (req.getCloseStdin()) {
                p.closeStdin();
            }
            return SendInputResponse.getDefaultInstance();
        });
    }

    @Override
    public void signalProcess(SignalProcessRequest req, StreamObserver<SignalProcessResponse> out) {
        unary(out, () -> {
            int sig = signalNumber(req.getSignal());
            find(req.getProcess()).signal(sig);
            return SignalProcessResponse.getDefaultInstance();
        });
    }

    @Override
    public void updateProcess(UpdateProcessRequest req, StreamObserver<UpdateProcessResponse> out) {
        unary(out, () -> {
            if (!req.hasPty()) {
                throw invalid("pty (the new terminal size) is required");
            }
            TerminalSize size = new TerminalSize(req.getPty().getCols(), req.getPty().getRows());
            find(req.getProcess()).resize(size);
            return UpdateProcessResponse.getDefaultInstance();
        });
    }

    private ManagedProcess find(ProcessRef ref) {
        return pools.running(ref.getSandboxId()).processes().find(ref);
    }

    /** The signal's number; INVALID_ARGUMENT for one other than SIGKILL and SIGTERM. */
    static int signalNumber(Signal s) {
        return switch (s) {
            case SIGNAL_SIGKILL -> 9;
            case SIGNAL_SIGTERM -> 15;
            default -> throw invalid("signal must be SIGNAL_SIGKILL or SIGNAL_SIGTERM");
        };
    }
}
