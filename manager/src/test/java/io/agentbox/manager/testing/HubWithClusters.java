package io.agentbox.manager.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.agentbox.manager.Hub;
import io.agentbox.manager.HubConfig;
import io.agentbox.manager.builds.TemplateBuilds;
import io.agentbox.manager.testing.JsonHttp.Res;
import io.agentbox.protocol.TunnelProtocol;
import io.agentbox.protocol.v1.ExecEvent;
import io.agentbox.protocol.v1.ExecRequest;
import io.agentbox.protocol.v1.ExecStart;
import io.agentbox.protocol.v1.ProcessConfig;
import io.agentbox.protocol.v1.ProcessServiceGrpc;
import io.agentbox.worker.WorkerAgent;
import io.agentbox.worker.WorkerDirs;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A hub on loopback (data under {@code <dir>/hub}) that worker clusters join, each over its own
 * tunnel with its own data under {@code <dir>/<cluster>}: the setup of tests of work moving
 * between clusters. {@link #close} stops the hub, then the workers.
 */
public final class HubWithClusters implements AutoCloseable {
    /** How long a test waits for a cluster, a pool or a copy. */
    public static final Duration T = Duration.ofSeconds(120);

    private final JsonHttp client = new JsonHttp();
    private final Path dir;
    private final Hub hub;
    private final String managerToken;
    private final Map<String, String> key;
    private final URI tunnel;
    private final List<WorkerAgent> workers = new ArrayList<>();

    private HubWithClusters(Path dir, Hub hub, int tunnelPort) {
        this.dir = dir;
        this.hub = hub;
        this.managerToken = hub.newManagerToken().orElseThrow();
        this.key = Map.of("X-API-Key", hub.newAdminKey().orElseThrow());
        this.tunnel = URI.create("ws://127.0.0.1:" + tunnelPort + TunnelProtocol.PATH);
    }

    /** Starts a hub with its API, tunnel and management endpoints on loopback; no cluster yet. */
    public static HubWithClusters start(Path dir) throws Exception {
        int tunnelPort = JsonHttp.freePort();
        Hub hub = Hub.start(HubConfig.defaults(dir.resolve("hub")).withApi("127.0.0.1", 0).withTunnel("127.0.0.1", tunnelPort)
                .withManagement("127.0.0.1", 0), null);
        return new HubWithClusters(dir, hub, tunnelPort);
    }

    public Hub hub() {
        return hub;
    }

    /** The admin's API key header. */
    public Map<String, String> key() {
        return key;
    }

    /** The sandbox data directory of worker {@code cluster}. */
    public Path workerData(String cluster) {
        return WorkerDirs.sandboxDataDir(dir.resolve(cluster));
    }

    /** Where the hub keeps image blobs. */
    public Path hubBlobDir() {
        return TemplateBuilds.blobDir(dir.resolve("hub"));
    }

    /** Registers {@code cluster} on the hub, starts its worker and waits until its tunnel is up. */
    public void join(String cluster) throws Exception {
        String token = client.call("POST", hub.managementPort(), "/internal/clusters",
                Map.of("Authorization", "Bearer " + managerToken), "{\"id\":\"" + cluster + "\"}").json().get("token").asText();
        workers.add(WorkerAgent.start(tunnel, cluster, token, workerData(cluster)));
        await().atMost(T).until(() -> hub.tunnels().registry().isConnected(cluster));
    }

    /** The worker agent of {@code cluster} (joined before). */
    public WorkerAgent worker(String cluster) {
        return workers.stream().filter(w -> w.clusterId().equals(cluster)).findFirst().orElseThrow();
    }

    /** A call to the hub's public API as the admin. */
    public Res api(String method, String path, String body) throws Exception {
        return client.call(method, hub.apiPort(), path, key, body);
    }

    /** Creates a sandbox of {@code templateId}, which must answer 201; its id. */
    public String create(String templateId) throws Exception {
        Res r = api("POST", "/sandboxes", "{\"templateID\":\"" + templateId + "\"}");
        assertThat(r.status()).as("create %s: %s", templateId, r.json()).isEqualTo(201);
        return r.json().get("sandboxID").asText();
    }

    /** Creates a sandbox of {@code templateId} as soon as a create answers 201 (its pool is ready); its id. */
    public String createOnceReady(String templateId) {
        return await().atMost(T).pollInterval(Duration.ofMillis(250)).until(() -> {
            Res r = api("POST", "/sandboxes", "{\"templateID\":\"" + templateId + "\"}");
            return r.status() == 201 ? r.json().get("sandboxID").asText() : null;
        }, id -> id != null);
    }

    /** Digests of the blobs the hub holds. */
    public Set<String> hubBlobs() throws Exception {
        return blobs(hubBlobDir().resolve("sha256"));
    }

    /** Digests of the blobs in a content-addressed directory of {@code <hex>} files. */
    public static Set<String> blobs(Path sha256Dir) throws Exception {
        try (Stream<Path> s = Files.list(sha256Dir)) {
            return s.map(p -> "sha256:" + p.getFileName()).collect(Collectors.toCollection(HashSet::new));
        }
    }

    /** Runs {@code sh -c cmd} as root in the sandbox over the hub's tunnel to its worker; its stdout. */
    public String sh(String cluster, String sandboxId, String cmd) {
        CompletableFuture<String> done = new CompletableFuture<>();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StreamObserver<ExecRequest> req = ProcessServiceGrpc.newStub(hub.tunnels().channel(cluster)).exec(new StreamObserver<>() {
            @Override
            public void onNext(ExecEvent e) {
                if (e.hasStdout()) {
                    synchronized (out) {
                        out.writeBytes(e.getStdout().toByteArray());
                    }
                }
            }

            @Override
            public void onError(Throwable t) {
                done.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                synchronized (out) {
                    done.complete(out.toString(StandardCharsets.UTF_8));
                }
            }
        });
        req.onNext(ExecRequest.newBuilder().setStart(ExecStart.newBuilder().setSandboxId(sandboxId).setProcess(
                ProcessConfig.newBuilder().setCmd("/bin/sh").addArgs("-c").addArgs(cmd).setUser("root"))).build());
        String result = done.orTimeout(60, TimeUnit.SECONDS).join();
        req.onCompleted();
        return result;
    }

    @Override
    public void close() {
        try {
            hub.close();
        } finally {
            workers.forEach(WorkerAgent::close);
        }
    }
}
