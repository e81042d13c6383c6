package io.agentbox.worker.service;

import io.agentbox.protocol.v1.BuildEvent;
import io.agentbox.protocol.v1.BuildInput;
import io.agentbox.protocol.v1.TemplateBuildServiceGrpc;
import io.agentbox.worker.build.BuildService;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;

/** template_build.proto's {@code TemplateBuildService}: template builds on this worker ({@link BuildService}). */
final class TemplateBuildServiceImpl extends TemplateBuildServiceGrpc.TemplateBuildServiceImplBase {
    /** Null on a worker that cannot build (no local runtime with an image store). */
    private final BuildService builds;

    TemplateBuildServiceImpl(BuildService builds) {
        this.builds = builds;
    }

    @Override
    public StreamObserver<BuildInput> buildTemplate(StreamObserver<BuildEvent> responses) {
        if (builds == null) {
            responses.onError(Status.FAILED_PRECONDITION.withDescription("this worker cannot build templates: "
                    + "builds need the local runtime with an image store").asRuntimeException());
            return new StreamObserver<>() {
                @Override
                public void onNext(BuildInput value) {}

                @Override
                public void onError(Throwable t) {}

                @Override
                public void onCompleted() {}
            };
        }
        return builds.call(responses);
    }
}
