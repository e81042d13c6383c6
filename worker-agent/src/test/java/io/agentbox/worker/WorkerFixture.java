package io.agentbox.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.protocol.v1.CreateSandboxRequest;
import io.agentbox.protocol.v1.ExecEvent;
import io.agentbox.protocol.v1.ExecRequest;
import io.agentbox.protocol.v1.ExecStart;
import io.agentbox.protocol.v1.ProcessConfig;
import io.agentbox.protocol.v1.ProcessExited;
import io.agentbox.protocol.v1.Template;
import io.agentbox.protocol.v1.FilesystemServiceGrpc;
import io.agentbox.protocol.v1.ImageServiceGrpc;
import io.agentbox.protocol.v1.ProcessServiceGrpc;
import io.agentbox.protocol.v1.SandboxServiceGrpc;
import io.agentbox.protocol.v1.TemplateBuildServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/** A real SandboxHost (crun containers) behind an in-process gRPC server. */
final class WorkerFixture implements AutoCloseable {
    static final String CLUSTER = "test";

    final Path dataDir;
    final SandboxHost host;
    final Server server;
    final ManagedChannel channel;
    // one stub per worker service; the blocking ones with a 60 s deadline from the fixture's start
    final SandboxServiceGrpc.SandboxServiceBlockingStub sandboxes;
    final ProcessServiceGrpc.ProcessServiceBlockingStub processes;
    final ProcessServiceGrpc.ProcessServiceStub processesAsync;
    final FilesystemServiceGrpc.FilesystemServiceBlockingStub files;
    final FilesystemServiceGrpc.FilesystemServiceStub filesAsync;
    final ImageServiceGrpc.ImageServiceBlockingStub imageStore;
    final TemplateBuildServiceGrpc.TemplateBuildServiceStub builds;

    WorkerFixture(Template... templates) throws IOException {
        this(List.of(), templates);
    }

    WorkerFixture(List<Path> hiddenFromSandboxes, Template... templates) throws IOException {
        this(hiddenFromSandboxes, io.agentbox.worker.image.TemplateImages.BUILT_IN_ONLY, templates);
    }

    /** @param images prepares the templates' images (tests pass a controllable one) */
    WorkerFixture(List<Path> hiddenFromSandboxes, io.agentbox.worker.image.TemplateImages images, Template... templates)
            throws IOException {
        this((java.util.function.Function<Path, io.agentbox.worker.image.TemplateImages>) dir -> images, hiddenFromSandboxes,
                templates);
    }

    /** @param images the image preparation over the worker's data directory (e.g. its own image store) */
    WorkerFixture(java.util.function.Function<Path, io.agentbox.worker.image.TemplateImages> images, List<Path> hiddenFromSandboxes,
                  Template... templates) throws IOException {
        requireCrun();
        // under /tmp (o+x) so a root worker can run sandboxes as an unprivileged uid
        dataDir = Files.createTempDirectory(Path.of("/tmp"), "agentbox-worker-test-");
        Files.setAttribute(dataDir, "unix:mode", 0711);
        host = SandboxHost.start(CLUSTER, dataDir, 64, hiddenFromSandboxes, images.apply(dataDir));
        host.applyTemplates(List.of(templates));
        String name = InProcessServerBuilder.generateName();
        InProcessServerBuilder serverBuilder = InProcessServerBuilder.forName(name).directExecutor();
        host.grpcServices().forEach(serverBuilder::addService);
        server = serverBuilder.build().start();
        channel = InProcessChannelBuilder.forName(name).build();
        sandboxes = SandboxServiceGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
        processes = ProcessServiceGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
        processesAsync = ProcessServiceGrpc.newStub(channel);
        files = FilesystemServiceGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
        filesAsync = FilesystemServiceGrpc.newStub(channel);
        imageStore = ImageServiceGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
        builds = TemplateBuildServiceGrpc.newStub(channel);
    }

    static Template template(String name, int poolSize) {
        return Template.newBuilder().setName(name).setPoolSize(poolSize).setNetwork("host")
                .putEnvVars("TEMPLATE_VAR", "from-template").build();
    }

    static void requireCrun() {
        for (String[] tool : new String[][] {{"crun", "crun"}, {"catatonit", "catatonit"}, {"busybox", "busybox-static"}}) {
            if (!onPath(tool[0])) {
                throw new AssertionError(tool[0] + " is required for the worker-agent tests: install the '" + tool[1]
                        + "' package (tests never skip without it)");
            }
        }
    }

    private static boolean onPath(String program) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
                return true;
            }
        }
        return false;
    }

    String create() {
        return create(Map.of());
    }

    String create(Map<String, String> env) {
        return sandboxes.createSandbox(CreateSandboxRequest.newBuilder().setTemplate("base").putAllEnvVars(env)
                .setOwner("team-a").build()).getSandboxId();
    }

    /** Runs {@code bash -l -c cmd} and collects everything until the exit. */
    Result run(String sandboxId, String cmd) {
        return run(ExecStart.newBuilder().setSandboxId(sandboxId)
                .setProcess(ProcessConfig.newBuilder().setCmd("/bin/bash").addArgs("-l").addArgs("-c").addArgs(cmd)).build());
    }

    Result run(ExecStart start) {
        Collector c = new Collector();
        StreamObserver<ExecRequest> req = processesAsync.exec(c);
        req.onNext(ExecRequest.newBuilder().setStart(start).build());
        Result r = c.result.orTimeout(60, TimeUnit.SECONDS).join();
        req.onCompleted();
        return r;
    }

    /** Collects the events of an Exec or AttachProcess call. */
    static final class Collector implements StreamObserver<ExecEvent> {
        final List<ExecEvent> events = new CopyOnWriteArrayList<>();
        final CompletableFuture<Result> result = new CompletableFuture<>();
        final CompletableFuture<Integer> started = new CompletableFuture<>();
        final CompletableFuture<String> firstStdout = new CompletableFuture<>();

        @Override
        public void onNext(ExecEvent e) {
            events.add(e);
            if (e.hasStarted()) {
                started.complete(e.getStarted().getPid());
            }
            if (e.hasStdout()) {
                firstStdout.complete(e.getStdout().toStringUtf8());
            }
        }

        @Override
        public void onError(Throwable t) {
            started.completeExceptionally(t);
            result.completeExceptionally(t);
        }

        @Override
        public void onCompleted() {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            ProcessExited exited = null;
            int pid = -1;
            for (ExecEvent e : events) {
                switch (e.getEventCase()) {
                    case STARTED -> pid = e.getStarted().getPid();
                    case STDOUT -> out.writeBytes(e.getStdout().toByteArray());
                    case STDERR -> err.writeBytes(e.getStderr().toByteArray());
                    case EXITED -> exited = e.getExited();
                    default -> { }
                }
            }
            assertThat(events.get(0).hasStarted()).as("first event is started").isTrue();
            assertThat(events.get(events.size() - 1).hasExited()).as("last event is exited").isTrue();
            result.complete(new Result(pid, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8),
                    exited));
        }
    }

    record Result(int pid, String stdout, String stderr, ProcessExited exited) {
        int exitCode() {
            return exited.getExitCode();
        }
    }

    @Override
    public void close() throws IOException {
        channel.shutdownNow();
        server.shutdownNow();
        host.close();
        // what the host made: sandboxes/, crun/ and run/ (empty again after close), the image store and the spawner
        for (String sub : new String[] {"sandboxes", "crun", "run"}) {
            Files.deleteIfExists(dataDir.resolve(sub));
        }
        io.agentbox.worker.image.unpack.Trees.deleteRecursively(dataDir.resolve("images"));
        io.agentbox.worker.image.unpack.Trees.deleteRecursively(dataDir.resolve("builds"));
        io.agentbox.worker.image.unpack.Trees.deleteRecursively(dataDir.resolve("spawner")); // the compiled spawner
        Files.deleteIfExists(dataDir);
    }
}
