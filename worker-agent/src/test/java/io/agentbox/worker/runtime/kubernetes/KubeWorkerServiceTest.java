package io.agentbox.worker.runtime.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.agentbox.protocol.v1.CreateSandboxRequest;
import io.agentbox.protocol.v1.ExecEvent;
import io.agentbox.protocol.v1.ExecRequest;
import io.agentbox.protocol.v1.ExecStart;
import io.agentbox.protocol.v1.ListSandboxesRequest;
import io.agentbox.protocol.v1.PathRequest;
import io.agentbox.protocol.v1.PoolCapacity;
import io.agentbox.protocol.v1.ProcessConfig;
import io.agentbox.protocol.v1.SandboxInfo;
import io.agentbox.protocol.v1.SandboxRef;
import io.agentbox.protocol.v1.Template;
import io.agentbox.protocol.v1.FilesystemServiceGrpc;
import io.agentbox.protocol.v1.ProcessServiceGrpc;
import io.agentbox.protocol.v1.SandboxServiceGrpc;
import io.agentbox.worker.SandboxHost;
import io.agentbox.worker.runtime.kubernetes.model.PodContract;
import io.agentbox.worker.runtime.kubernetes.model.PodPhase;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The worker gRPC service over the {@code kubernetes} runtime (CRUD mock server; a local shell
 * stands in for pod exec): the same calls the hub makes for {@code local} sandboxes create, run
 * commands in, stat and kill pod sandboxes; templates of other runtimes are ignored.
 */
class KubeWorkerServiceTest {
    private final KubeMock mock = new KubeMock();
    private SandboxHost host;
    private Server server;
    private ManagedChannel channel;

    @TempDir
    Path dir;

    @AfterEach
    void tearDown() {
        if (channel != null) {
            channel.shutdownNow();
            server.shutdownNow();
        }
        if (host != null) {
            host.close();
        }
        mock.close();
    }

    @Test
    void hubCallsWorkTheSameOnPods() throws Exception {
        KubernetesRuntime rt = mock.runtime("worker-a");
        host = SandboxHost.withRuntimes("k8s-one", List.of(rt), 8);
        host.applyTemplates(List.of(
                Template.newBuilder().setName("py").setPoolSize(2).setRuntime("kubernetes").build(),
                Template.newBuilder().setName("base").setPoolSize(2).setRuntime("local").build()));
        String name = InProcessServerBuilder.generateName();
        InProcessServerBuilder serverBuilder = InProcessServerBuilder.forName(name).directExecutor();
        host.grpcServices().forEach(serverBuilder::addService);
        server = serverBuilder.build().start();
        channel = InProcessChannelBuilder.forName(name).build();
        var sandboxes = SandboxServiceGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
        var files = FilesystemServiceGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);

        assertThat(host.runtimeNames()).containsExactly("kubernetes");
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(host.capacity())
                .extracting(PoolCapacity::getTemplate, PoolCapacity::getIdle).containsExactly(org.assertj.core.groups.Tuple.tuple("py", 2)));
        assertThatThrownBy(() -> sandboxes.createSandbox(CreateSandboxRequest.newBuilder().setTemplate("base").build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));

        SandboxInfo info = sandboxes.createSandbox(CreateSandboxRequest.newBuilder().setTemplate("py").setOwner("team-a")
                .putEnvVars("GREETING", "hi").build());
        assertThat(info.getClusterId()).isEqualTo("k8s-one");
        assertThat(info.getSandboxId()).endsWith("-k8s-one");

        assertThat(run(info.getSandboxId(), "echo $GREETING > " + dir + "/out; cat " + dir + "/out")).isEqualTo("hi\n");
        assertThat(files.stat(PathRequest.newBuilder().setSandboxId(info.getSandboxId()).setPath(dir + "/out").build())
                .getSize()).isEqualTo(3);
        // pods have no root inside: root is refused, never run as someone else
        assertThatThrownBy(() -> run(info.getSandboxId(), "root", "id -u"))
                .hasRootCauseInstanceOf(StatusRuntimeException.class).rootCause()
                .satisfies(e -> assertThat(((StatusRuntimeException) e).getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
        assertThatThrownBy(() -> files.stat(PathRequest.newBuilder().setSandboxId(info.getSandboxId()).setUser("root")
                .setPath(dir + "/out").build())).isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
        assertThat(sandboxes.listSandboxes(ListSandboxesRequest.getDefaultInstance()).getSandboxesList())
                .extracting(SandboxInfo::getSandboxId).containsExactly(info.getSandboxId());
        String pod = mock.podsInPhase("py", PodPhase.RUNNING).get(0).getMetadata().getName();
        assertThat(PodContract.label(mock.podsInPhase("py", PodPhase.RUNNING).get(0), PodContract.SANDBOX_ID))
                .isEqualTo(info.getSandboxId());

        sandboxes.killSandbox(SandboxRef.newBuilder().setSandboxId(info.getSandboxId()).build());
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(mock.client.pods().inNamespace(KubeMock.NS).withName(pod).get()).isNull();
            assertThat(mock.podsInPhase("py", PodPhase.IDLE)).hasSize(2);
        });
        assertThatThrownBy(() -> sandboxes.getSandbox(SandboxRef.newBuilder().setSandboxId(info.getSandboxId()).build()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
    }

    @Test
    void workerShutdownLeavesClaimedPodsForTheNextWorker() throws Exception {
        KubernetesRuntime rt = mock.runtime("worker-a");
        host = SandboxHost.withRuntimes("k8s-one", List.of(rt), 8);
        host.applyTemplates(List.of(Template.newBuilder().setName("py").setPoolSize(1).setRuntime("kubernetes").build()));
        await().atMost(Duration.ofSeconds(20)).until(() -> host.capacity().get(0).getIdle() == 1);
        String id = host.pools().claim(CreateSandboxRequest.newBuilder().setTemplate("py").setOwner("team-a").build()).id();
        await().atMost(Duration.ofSeconds(20)).until(() -> mock.podsInPhase("py", PodPhase.RUNNING).size() == 1);
        mock.settle("py", 1);

        host.close();
        host = null;

        assertThat(mock.podsInPhase("py", PodPhase.RUNNING)).extracting(p -> PodContract.label(p, PodContract.SANDBOX_ID))
                .containsExactly(id);
        KubernetesRuntime next = mock.runtime("worker-a");
        host = SandboxHost.withRuntimes("k8s-one", List.of(next), 8);
        host.applyTemplates(List.of(Template.newBuilder().setName("py").setPoolSize(1).setRuntime("kubernetes").build()));
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(host.pools().get(id).owner()).isEqualTo("team-a"));
    }

    private String run(String sandboxId, String script) {
        return run(sandboxId, "", script);
    }

    private String run(String sandboxId, String user, String script) {
        CompletableFuture<String> done = new CompletableFuture<>();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StreamObserver<ExecRequest> req = ProcessServiceGrpc.newStub(channel).exec(new StreamObserver<>() {
            @Override
            public void onNext(ExecEvent e) {
                if (e.hasStdout()) {
                    out.writeBytes(e.getStdout().toByteArray());
                }
            }

            @Override
            public void onError(Throwable t) {
                done.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                done.complete(out.toString());
            }
        });
        req.onNext(ExecRequest.newBuilder().setStart(ExecStart.newBuilder().setSandboxId(sandboxId)
                .setProcess(ProcessConfig.newBuilder().setUser(user).setCmd("/bin/sh").addArgs("-c").addArgs(script)
                        .setCwd(dir.toString())))
                .build());
        String result = done.orTimeout(60, TimeUnit.SECONDS).join();
        req.onCompleted();
        return result;
    }
}
