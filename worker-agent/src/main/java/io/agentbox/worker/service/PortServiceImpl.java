package io.agentbox.worker.service;

import io.agentbox.protocol.v1.PortRequest;
import io.agentbox.protocol.v1.PortResponse;
import io.agentbox.protocol.v1.PortServiceGrpc;
import io.agentbox.worker.pool.SandboxPools;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.ExecutorService;

/** port.proto's {@code PortService}: TCP connections to ports of running sandboxes ({@link PortForward}). */
final class PortServiceImpl extends PortServiceGrpc.PortServiceImplBase {
    private final SandboxPools pools;
    private final ExecutorService blocking;

    PortServiceImpl(SandboxPools pools, ExecutorService blocking) {
        this.pools = pools;
        this.blocking = blocking;
    }

    @Override
    public StreamObserver<PortRequest> forwardPort(StreamObserver<PortResponse> responses) {
        return new PortForward((ServerCallStreamObserver<PortResponse>) responses,
                id -> pools.running(id).runtime(), blocking);
    }
}
