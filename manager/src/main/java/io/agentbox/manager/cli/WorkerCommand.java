package io.agentbox.manager.cli;

import io.agentbox.mux.tls.ClientTls;
import io.agentbox.mux.tls.ServerTls;
import io.agentbox.mux.tls.TlsFileException;
import io.agentbox.worker.SandboxHost;
import io.agentbox.manager.workerapi.WorkerApi;
import io.agentbox.manager.workerapi.WorkerMetrics;
import io.agentbox.worker.WorkerAgent;
import io.agentbox.worker.WorkerDirs;
import io.agentbox.worker.image.RegistrySettings;
import io.agentbox.worker.pool.SandboxPools;
import io.agentbox.worker.runtime.kubernetes.KubeRuntimeConfig;
import io.agentbox.worker.runtime.kubernetes.KubernetesRuntime;
import io.netty.handler.ssl.SslContext;
import java.net.InetAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "worker", mixinStandardHelpOptions = true,
        description = "A worker cluster: dials the hub and runs warm pools of sandboxes (local processes or Kubernetes pods).")
final class WorkerCommand implements Callable<Integer> {
    @Option(names = "--hub", required = true, description = "The hub's tunnel endpoint, e.g. ws://hub:9003/v1/tunnel.")
    URI hub;

    @Option(names = "--cluster-id", required = true, description = "This cluster's id (lowercase letters, digits, '-').")
    String clusterId;

    @Option(names = "--token-file", required = true, description = "File holding the cluster token.")
    Path tokenFile;

    @Option(names = "--data-dir", description = "Where sandbox layers live (default: $AGENTBOX_DATA_DIR or ~/.agentbox, plus /worker).")
    Path dataDir;

    @Option(names = "--runtime", defaultValue = "local", description = "Sandbox runtime: local (crun containers on "
            + "this machine) or kubernetes (pods in this cluster; needs the CRDs and RBAC of deploy/). Default: ${DEFAULT-VALUE}.")
    String runtime;

    @Option(names = "--namespace", description = "kubernetes: namespace of the pools, pods and leader lease "
            + "(default: the worker pod's own namespace, else the kubeconfig context's, else 'default').")
    String namespace;

    @Option(names = "--identity", description = "kubernetes: this replica's name in the leader election "
            + "(default: $POD_NAME, else the host name).")
    String identity;

    @Option(names = "--sandbox-image", defaultValue = KubeRuntimeConfig.DEFAULT_IMAGE, description = "kubernetes: image "
            + "of pools without a SandboxTemplate; needs /bin/sh, coreutils and GNU find. Default: ${DEFAULT-VALUE}.")
    String sandboxImage;

    @Option(names = "--api-port", defaultValue = "8090", description = "Port of the public API this worker serves "
            + "for clients inside its cluster (E2B API, keys pushed by the hub); 0 picks a free one, -1 turns it off "
            + "(default: ${DEFAULT-VALUE}).")
    int apiPort;

    @Option(names = "--api-host", defaultValue = "0.0.0.0", description = "Address of that API (default: ${DEFAULT-VALUE}).")
    String apiHost;

    @Option(names = "--metrics-port", defaultValue = "" + WorkerMetrics.DEFAULT_PORT, description = "Port of this "
            + "worker's Prometheus /metrics (pools, claims, sandbox starts, commands, OOM kills, image pulls, its API, "
            + "the JVM; docs/metrics.md); 0 picks a free one, -1 turns it off (default: ${DEFAULT-VALUE}).")
    int metricsPort;

    @Option(names = "--metrics-host", defaultValue = "0.0.0.0", description = "Address of that /metrics; it has no "
            + "authentication and shows counts and template names only (default: ${DEFAULT-VALUE}).")
    String metricsHost;

    @Option(names = "--hub-ca", description = "PEM file of the CA(s) that signed the hub's certificate, for a wss:// "
            + "--hub (default: the JVM's system trust store). The hub's host name is always checked.")
    Path hubCa;

    @picocli.CommandLine.Mixin
    TlsOptions tls;

    @picocli.CommandLine.Mixin
    RegistryOptions registry;

    @Option(names = "--max-sandboxes", defaultValue = "" + SandboxPools.DEFAULT_MAX_SANDBOXES,
            description = "local: most live sandboxes (idle, starting and claimed), 1..10000 (default: ${DEFAULT-VALUE}).")
    int maxSandboxes;

    /** Most sandboxes one worker may be told to keep; each costs a few processes and kernel objects. */
    static final int MAX_SANDBOXES_LIMIT = 10_000;

    static void checkMaxSandboxes(Object command, int max) {
        if (max < 1 || max > MAX_SANDBOXES_LIMIT) {
            throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(command),
                    "--max-sandboxes must be 1.." + MAX_SANDBOXES_LIMIT + ", got " + max);
        }
    }

    /** A port option where -1 turns the listener off and 0 picks a free port. */
    static void checkOptionalPort(Object command, String option, int port) {
        if (port < -1 || port > 65535) {
            throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(command),
                    option + " must be -1 (off) or 0..65535, got " + port);
        }
    }

    @Override
    public Integer call() throws Exception {
        checkMaxSandboxes(this, maxSandboxes);
        String scheme = hub.getScheme() == null ? "" : hub.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("ws") && !scheme.equals("wss")) {
            throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this),
                    "--hub must be the hub's tunnel endpoint, ws://HOST:9003/v1/tunnel or wss://..., got " + hub);
        }
        checkOptionalPort(this, "--api-port", apiPort);
        checkOptionalPort(this, "--metrics-port", metricsPort);
        if (metricsPort > 0 && metricsPort == apiPort) {
            throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this),
                    "--metrics-port " + metricsPort + " is also the --api-port; choose another");
        }
        RegistrySettings registrySettings = registry.toSettings(this);
        if (hubCa != null && !scheme.equals("wss")) {
            throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this),
                    "--hub-ca is for a wss:// --hub; " + hub + " is plain ws://");
        }
        SslContext hubTls;
        try {
            hubTls = scheme.equals("wss") ? ClientTls.verifying(hubCa) : null;
        } catch (TlsFileException e) {
            throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this), "--hub-ca: " + e.getMessage());
        }
        ServerTls apiTls = apiPort >= 0 ? tls.start(this) : null;
        String token = Files.readString(tokenFile, StandardCharsets.UTF_8).trim();
        WorkerMetrics metrics = WorkerMetrics.create(clusterId, true);
        WorkerAgent agent = switch (runtime) {
            case "local" -> WorkerAgent.start(hub, clusterId, token, SandboxHost.start(clusterId,
                    WorkerDirs.sandboxDataDir(dataDir != null ? dataDir : DataDirs.defaultDataDir().resolve("worker")),
                    maxSandboxes, List.of(), registrySettings, metrics.meters()), hubTls);
            case "kubernetes" -> {
                KubeRuntimeConfig config = KubeRuntimeConfig.defaults(namespace(), identity()).withDefaultImage(sandboxImage);
                KubernetesRuntime kube = KubernetesRuntime.inCluster(config);
                // replicas share one cluster id, and the hub keeps one tunnel per cluster: only the
                // leader dials; a replica that loses the lease exits and waits again after its restart
                kube.onLeadershipLost(() -> {
                    System.err.println("agentbox: " + config.identity() + " lost the leader lease; exiting");
                    System.exit(3);
                });
                System.out.println("agentbox: " + config.identity() + " waiting for the leader lease of namespace "
                        + config.namespace());
                kube.firstLeadership().join();
                yield WorkerAgent.start(hub, clusterId, token,
                        SandboxHost.withRuntimes(clusterId, List.of(kube), SandboxPools.DEFAULT_MAX_SANDBOXES,
                                metrics.meters()), hubTls);
            }
            default -> throw new IllegalArgumentException("--runtime must be 'local' or 'kubernetes', not '" + runtime + "'");
        };
        System.out.println("agentbox: worker " + clusterId + " (" + runtime + " runtime) dialing " + hub);
        if (metricsPort >= 0) {
            try {
                metrics.serve(metricsHost, metricsPort);
            } catch (Exception e) {
                agent.close();
                metrics.close();
                System.err.println("agentbox: cannot serve /metrics on " + metricsHost + ":" + metricsPort + ": " + e.getMessage());
                return 1;
            }
            System.out.println("agentbox: Prometheus metrics on http://" + metricsHost + ":" + metrics.port() + WorkerMetrics.PATH);
        }
        WorkerApi api = null;
        if (apiPort >= 0) {
            try {
                api = WorkerApi.start(agent, apiHost, apiPort, apiTls, metrics.registry());
            } catch (Exception e) {
                agent.close();
                metrics.close();
                System.err.println("agentbox: cannot serve the public API on " + apiHost + ":" + apiPort + ": " + e.getMessage());
                return 1;
            }
            System.out.println("agentbox: public API for clients in this cluster on " + (apiTls == null ? "http" : "https")
                    + "://" + apiHost + ":" + api.port()
                    + " (API keys of the hub; E2B_API_URL and E2B_SANDBOX_URL)");
        }
        WorkerApi localApi = api;
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (localApi != null) {
                localApi.close();
            }
            agent.close();
            metrics.close();
            stopped.countDown();
        }, "agentbox-shutdown"));
        stopped.await();
        return 0;
    }

    private String namespace() {
        return namespace != null && !namespace.isBlank() ? namespace : KubernetesRuntime.defaultNamespace();
    }

    private String identity() throws Exception {
        if (identity != null && !identity.isBlank()) {
            return identity;
        }
        String pod = System.getenv("POD_NAME");
        return pod != null && !pod.isBlank() ? pod : InetAddress.getLocalHost().getHostName();
    }
}
