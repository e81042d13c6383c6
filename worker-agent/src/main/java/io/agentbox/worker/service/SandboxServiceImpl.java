package io.agentbox.worker.service;

import static io.agentbox.worker.service.WorkerStatus.unary;

import io.agentbox.protocol.ErrorReason;
import io.agentbox.protocol.v1.CreateSandboxRequest;
import io.agentbox.protocol.v1.CreateSnapshotRequest;
import io.agentbox.protocol.v1.DeleteSnapshotResponse;
import io.agentbox.protocol.v1.KillSandboxResponse;
import io.agentbox.protocol.v1.ListSandboxesRequest;
import io.agentbox.protocol.v1.ListSandboxesResponse;
import io.agentbox.protocol.v1.PauseSandboxRequest;
import io.agentbox.protocol.v1.ResumeSandboxRequest;
import io.agentbox.protocol.v1.ResumeSandboxResponse;
import io.agentbox.protocol.v1.SandboxInfo;
import io.agentbox.protocol.v1.SandboxMetricsRequest;
import io.agentbox.protocol.v1.SandboxMetricsResponse;
import io.agentbox.protocol.v1.SandboxRef;
import io.agentbox.protocol.v1.SandboxServiceGrpc;
import io.agentbox.protocol.v1.SetTimeoutRequest;
import io.agentbox.protocol.v1.SnapshotInfo;
import io.agentbox.protocol.v1.SnapshotRef;
import io.agentbox.worker.pool.ClaimedSandbox;
import io.agentbox.worker.pool.SandboxPools;
import io.agentbox.worker.snapshot.Snapshots;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;

/**
 * sandbox.proto's {@code SandboxService} over the warm pools: claim, get, list, kill, end time,
 * pause and resume, metrics, reset, and snapshots. Errors as worker_common.proto ({@link WorkerStatus}).
 */
final class SandboxServiceImpl extends SandboxServiceGrpc.SandboxServiceImplBase {
    private final SandboxPools pools;
    /** Null when the worker has no image store (snapshots then fail with FAILED_PRECONDITION). */
    private final Snapshots snapshots;

    SandboxServiceImpl(SandboxPools pools, Snapshots snapshots) {
        this.pools = pools;
        this.snapshots = snapshots;
    }

    @Override
    public void createSandbox(CreateSandboxRequest req, StreamObserver<SandboxInfo> out) {
        unary(out, () -> pools.claim(req).info());
    }

    @Override
    public void getSandbox(SandboxRef req, StreamObserver<SandboxInfo> out) {
        unary(out, () -> pools.get(req.getSandboxId()).info());
    }

    @Override
    public void listSandboxes(ListSandboxesRequest req, StreamObserver<ListSandboxesResponse> out) {
        unary(out, () -> {
            ListSandboxesResponse.Builder b = ListSandboxesResponse.newBuilder();
            pools.list(req.getOwner()).forEach(c -> b.addSandboxes(c.info()));
            return b.build();
        });
    }

    @Override
    public void killSandbox(SandboxRef req, StreamObserver<KillSandboxResponse> out) {
        unary(out, () -> {
            pools.kill(req.getSandboxId());
            return KillSandboxResponse.getDefaultInstance();
        });
    }

    @Override
    public void setTimeout(SetTimeoutRequest req, StreamObserver<SandboxInfo> out) {
        unary(out, () -> pools.setTimeout(req.getSandboxId(), req.getTimeoutSeconds(), req.getEndAtMs()).info());
    }

    // ---- pause and resume, metrics (issue 14)

    @Override
    public void pauseSandbox(PauseSandboxRequest req, StreamObserver<SandboxInfo> out) {
        unary(out, () -> pools.pause(req.getSandboxId(), req.getDropMemory()).info());
    }

    @Override
    public void resumeSandbox(ResumeSandboxRequest req, StreamObserver<ResumeSandboxResponse> out) {
        unary(out, () -> {
            SandboxPools.Resumed r = pools.resume(req.getSandboxId(), req.getTimeoutSeconds(), req.getEndAtMs(),
                    req.getDropMemory());
            return ResumeSandboxResponse.newBuilder().setSandbox(r.sandbox().info()).setResumed(r.resumed()).build();
        });
    }

    @Override
    public void getSandboxMetrics(SandboxMetricsRequest req, StreamObserver<SandboxMetricsResponse> out) {
        unary(out, () -> SandboxMetricsResponse.newBuilder()
                .addAllSamples(pools.metrics(req.getSandboxId(), req.getStartMs(), req.getEndMs())).build());
    }

    // ---- snapshots and reset (issue 14)

    @Override
    public void createSnapshot(CreateSnapshotRequest req, StreamObserver<SnapshotInfo> out) {
        unary(out, () -> require(snapshots).create(req.getSandboxId(), req.getSnapshotId()));
    }

    @Override
    public void deleteSnapshot(SnapshotRef req, StreamObserver<DeleteSnapshotResponse> out) {
        unary(out, () -> {
            require(snapshots).delete(req.getSnapshotId());
            return DeleteSnapshotResponse.getDefaultInstance();
        });
    }

    @Override
    public void resetSandbox(SandboxRef req, StreamObserver<SandboxInfo> out) {
        unary(out, () -> {
            ClaimedSandbox c;
            try {
                c = pools.get(req.getSandboxId());
            } catch (StatusRuntimeException e) {
                throw ErrorReason.SANDBOX_NOT_FOUND.exception(Status.Code.NOT_FOUND, e.getStatus().getDescription());
            }
            try {
                c.reset(); // serialized with pause and resume; refuses a paused sandbox
            } catch (StatusRuntimeException e) {
                if (!c.runtime().isAlive()) {
                    try {
                        pools.kill(c.id()); // the failed reset killed it: free its slot and record
                    } catch (StatusRuntimeException gone) {
                        // reaped meanwhile
                    }
                }
                throw e;
            }
            return c.info();
        });
    }

    /** {@code snapshots}, or FAILED_PRECONDITION on a worker without an image store (also for ImageService.ExportSnapshot). */
    static Snapshots require(Snapshots snapshots) {
        if (snapshots == null) {
            throw Status.FAILED_PRECONDITION.withDescription("this worker has no image store, so it keeps no snapshots")
                    .asRuntimeException();
        }
        return snapshots;
    }
}
