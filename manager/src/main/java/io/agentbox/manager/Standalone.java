package io.agentbox.manager;

import io.agentbox.manager.workerapi.WorkerMetrics;
import io.agentbox.mux.tls.ServerTls;
import io.agentbox.protocol.TunnelProtocol;
import io.agentbox.protocol.image.PoolReadiness;
import io.agentbox.protocol.v1.PoolCapacity;
import io.agentbox.worker.SandboxHost;
import io.agentbox.worker.WorkerAgent;
import io.agentbox.worker.WorkerDirs;
import io.agentbox.worker.image.RegistrySettings;
import io.agentbox.worker.pool.SandboxPools;
import io.agentbox.wsproxy.SharedTokenAuthenticator;
import java.net.URI;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * All-in-one mode: a hub and one {@code local} worker (cluster {@value #CLUSTER_ID}) in one JVM. The
 * worker still dials the hub's tunnel endpoint over a real loopback WebSocket, so every request
 * takes the production path: HTTP → hub → WebSocket → mux → gRPC → worker → crun container.
 *
 * <p>Layout under the data directory: {@code hub/} (the embedded PostgreSQL store, unless a store URL is given),
 * {@code admin-key}, {@code manager-token}, {@code worker/}
 * (sandbox layers; a temp directory instead when the data directory is not searchable by other
 * users, see {@link WorkerDirs}). The tunnel listens on an ephemeral loopback port with a token made per run.
 */
public final class Standalone implements AutoCloseable {
    public static final String CLUSTER_ID = "local";

    private final Hub hub;
    private final WorkerAgent worker;
    private final WorkerMetrics workerMetrics;

    private Standalone(Hub hub, WorkerAgent worker, WorkerMetrics workerMetrics) {
        this.hub = hub;
        this.worker = worker;
        this.workerMetrics = workerMetrics;
    }

    /**
     * Starts everything and waits until the worker has connected and its warm pools are filled (or
     * {@code warmTimeout} passed); {@code progress} receives one line per step.
     */
    public static Standalone start(Path dataDir, String host, int apiPort, Duration warmTimeout,
                                   Consumer<String> progress) throws Exception {
        return start(dataDir, host, apiPort, BaseTemplate.UNCHANGED, warmTimeout, progress);
    }

    /** As above with command-line settings for the {@code base} template (management API on an ephemeral loopback port). */
    public static Standalone start(Path dataDir, String host, int apiPort, BaseTemplate base, Duration warmTimeout,
                                   Consumer<String> progress) throws Exception {
        return start(HubConfig.defaults(dataDir).withApi(host, apiPort).withManagement(HubConfig.DEFAULT_MANAGEMENT_HOST, 0)
                .withBase(base), warmTimeout, progress);
    }

    /**
     * Starts a hub as {@code hubConfig} says (its tunnel settings are replaced: the tunnel listens on an
     * ephemeral loopback port with a token made per run) and one local worker dialing it.
     */
    public static Standalone start(HubConfig hubConfig, Duration warmTimeout, Consumer<String> progress) throws Exception {
        return start(hubConfig, SandboxPools.DEFAULT_MAX_SANDBOXES, warmTimeout, progress);
    }

    /** As above with a limit of {@code maxSandboxes} live sandboxes (idle, starting and claimed) on the worker. */
    public static Standalone start(HubConfig hubConfig, int maxSandboxes, Duration warmTimeout, Consumer<String> progress)
            throws Exception {
        return start(hubConfig, maxSandboxes, null, warmTimeout, progress);
    }

    /**
     * As above; a non-null {@code apiTls} serves the hub's public API as HTTPS (the hub closes it).
     * The tunnel stays plain: it is a loopback connection inside this JVM.
     */
    public static Standalone start(HubConfig hubConfig, int maxSandboxes, ServerTls apiTls,
                                   Duration warmTimeout, Consumer<String> progress) throws Exception {
        return start(hubConfig, maxSandboxes, apiTls, RegistrySettings.DEFAULT, warmTimeout, progress);
    }

    /** As above; {@code registry} says how the worker reaches registries ({@code --insecure-registry}). */
    public static Standalone start(HubConfig hubConfig, int maxSandboxes, ServerTls apiTls,
                                   RegistrySettings registry, Duration warmTimeout, Consumer<String> progress)
            throws Exception {
        Path dataDir = hubConfig.dataDir();
        String token = HexFormat.of().formatHex(new SecureRandom().generateSeed(24));
        progress.accept("starting hub (data in " + dataDir.toAbsolutePath() + ")");
        Hub hub = Hub.start(hubConfig.withTunnel("127.0.0.1", 0), new SharedTokenAuthenticator(token), apiTls, null);
        WorkerAgent worker = null;
        // the worker's meters: a registry apart from the hub's (the JVM's meters are the hub's)
        WorkerMetrics workerMetrics = WorkerMetrics.create(CLUSTER_ID, false);
        try {
            URI tunnel = URI.create("ws://127.0.0.1:" + hub.tunnelPort() + TunnelProtocol.PATH);
            progress.accept("starting local worker, dialing " + tunnel);
            Path sandboxDir = WorkerDirs.sandboxDataDir(dataDir.resolve("worker"));
            progress.accept("sandbox layers in " + sandboxDir);
            // the hub's store (key hashes, the envd token secret) must stay out of sandboxes' view
            worker = WorkerAgent.start(tunnel, CLUSTER_ID, token,
                    SandboxHost.start(CLUSTER_ID, sandboxDir, maxSandboxes, List.of(dataDir), registry,
                            workerMetrics.meters()));
            worker.firstTemplates().get(warmTimeout.toMillis(), TimeUnit.MILLISECONDS);
            Standalone s = new Standalone(hub, worker, workerMetrics);
            s.awaitWarm(warmTimeout, progress);
            return s;
        } catch (Exception | Error e) {
            if (worker != null) {
                worker.close();
            }
            hub.close();
            workerMetrics.close();
            throw e;
        }
    }

    private void awaitWarm(Duration timeout, Consumer<String> progress) throws InterruptedException {
        Map<String, Integer> targets = new TreeMap<>();
        hub.store().templates().forEach(t -> targets.put(t.getName(), t.getPoolSize()));
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            Map<String, Integer> idle = new HashMap<>();
            Map<String, String> notReady = new HashMap<>();
            for (PoolCapacity p : worker.host().capacity()) {
                idle.put(p.getTemplate(), p.getIdle());
                if (!PoolReadiness.isReady(p)) {
                    notReady.put(p.getTemplate(), p.getStatus()
                            + (p.getStatusMessage().isEmpty() ? "" : " (" + p.getStatusMessage() + ")"));
                }
            }
            StringBuilder line = new StringBuilder();
            boolean full = hub.tunnels().registry().isConnected(CLUSTER_ID);
            for (var e : targets.entrySet()) {
                int have = idle.getOrDefault(e.getKey(), 0);
                String status = notReady.get(e.getKey());
                // a pool whose image failed waits for a retry that may take minutes: do not hold the start for it
                full &= have >= e.getValue() || (status != null && status.startsWith("error"));
                line.append(line.length() == 0 ? "" : ", ").append(e.getKey()).append(' ').append(have).append('/')
                        .append(e.getValue()).append(" idle").append(status == null ? "" : ", image " + status);
            }
            if (!line.toString().equals(last)) {
                progress.accept("warm pools: " + line);
                last = line.toString();
            }
            if (full) {
                return;
            }
            Thread.sleep(50);
        }
        Map<String, String> errors = worker.host().startErrors();
        progress.accept("warm pools not full after " + timeout.toSeconds() + " s; serving anyway"
                + (errors.isEmpty() ? "" : ". Pools that cannot start sandboxes: " + errors.entrySet().stream()
                        .map(e -> e.getKey() + ": " + e.getValue()).collect(Collectors.joining("; "))));
    }

    public Hub hub() {
        return hub;
    }

    public WorkerAgent worker() {
        return worker;
    }

    /**
     * The worker's registry (not served until {@link WorkerMetrics#serve} is called: {@code agentbox
     * standalone --worker-metrics-port}); closed with this.
     */
    public WorkerMetrics workerMetrics() {
        return workerMetrics;
    }

    /** Stops the API, kills every sandbox and removes its files. */
    @Override
    public void close() {
        try {
            worker.close();
        } finally {
            try {
                hub.close();
            } finally {
                workerMetrics.close();
            }
        }
    }
}
