package io.agentbox.manager.cli;

import io.agentbox.manager.Standalone;
import io.agentbox.manager.BaseTemplate;
import io.agentbox.manager.HubConfig;
import io.agentbox.manager.workerapi.WorkerApi;
import io.agentbox.manager.workerapi.WorkerMetrics;
import io.agentbox.mux.tls.ServerTls;
import io.agentbox.worker.image.RegistrySettings;
import io.agentbox.worker.pool.SandboxPools;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "standalone", mixinStandardHelpOptions = true,
        description = "Hub + one local worker in one JVM, connected through a real loopback WebSocket tunnel.")
final class StandaloneCommand implements Callable<Integer> {
    @Option(names = "--max-upload-mb", defaultValue = "1024",
            description = "Largest COPY archive a Template.build may upload, in MiB (default: ${DEFAULT-VALUE}).")
    long maxUploadMb;

    @Option(names = "--host", defaultValue = "127.0.0.1", description = "Address of the public API (default: ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--port", defaultValue = "8080", description = "Port of the public API (default: ${DEFAULT-VALUE}).")
    int port;

    @Mixin
    BaseTemplateOptions base;

    @Mixin
    TlsOptions tls;

    @Mixin
    StoreOptions store;

    @Mixin
    ManagementOptions management;

    @Mixin
    TeamLimitOptions teamLimits;

    @Mixin
    RegistryOptions registry;

    @Option(names = "--data-dir", description = "Where the embedded store, admin key, manager token and sandbox layers live (default: $AGENTBOX_DATA_DIR or ~/.agentbox).")
    Path dataDir;

    @Option(names = "--warm-timeout", defaultValue = "60", description = "Seconds to wait for the warm pool to fill before serving (default: ${DEFAULT-VALUE}).")
    int warmTimeoutSeconds;

    @Option(names = "--max-sandboxes", defaultValue = "" + SandboxPools.DEFAULT_MAX_SANDBOXES,
            description = "Most live sandboxes (idle, starting and claimed) on the worker, 1..10000 (default: ${DEFAULT-VALUE}).")
    int maxSandboxes;

    @Option(names = "--worker-api-port", defaultValue = "-1", description = "Also serve the worker's own public API "
            + "(as agentbox worker --api-port does) on this port of --host; 0 picks a free one, -1 turns it off "
            + "(default: ${DEFAULT-VALUE}). Benchmarks compare it with the hub's.")
    int workerApiPort;

    @Option(names = "--worker-metrics-port", defaultValue = "" + WorkerMetrics.DEFAULT_PORT, description = "Port of the "
            + "worker's own Prometheus /metrics (pools, claims, sandbox starts, commands, OOM kills, image pulls) on "
            + "--management-host; the hub's stay on the management port. 0 picks a free one, -1 turns it off "
            + "(default: ${DEFAULT-VALUE}).")
    int workerMetricsPort;

    @Override
    public Integer call() throws Exception {
        WorkerCommand.checkMaxSandboxes(this, maxSandboxes);
        teamLimits.check(this);
        RegistrySettings registrySettings = registry.toSettings(this);
        WorkerCommand.checkOptionalPort(this, "--worker-api-port", workerApiPort);
        WorkerCommand.checkOptionalPort(this, "--worker-metrics-port", workerMetricsPort);
        if (workerApiPort > 0 && workerApiPort == port) {
            throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this),
                    "--worker-api-port " + workerApiPort + " is also the hub's --port; choose another");
        }
        if (base.poolSize > maxSandboxes) {
            throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this), "--pool-size " + base.poolSize
                    + " exceeds --max-sandboxes " + maxSandboxes + ": the pool could never fill; raise --max-sandboxes");
        }
        Path dir = dataDir != null ? dataDir : DataDirs.defaultDataDir();
        HubConfig config = HubConfig.defaults(dir).withStore(store.toStoreConfig(dir)).withApi(host, port)
                .withManagement(management.host, management.port).withBase(base.toBaseTemplate())
                .withMaxUploadBytes(maxUploadMb << 20);
        // the worker's tunnel stays on loopback inside this JVM: TLS covers the public APIs
        ServerTls hubTls = tls.start(this);
        ServerTls workerTls = hubTls == null || workerApiPort < 0 ? null : tls.start(this);
        Standalone standalone = Standalone.start(config, maxSandboxes, hubTls, registrySettings,
                Duration.ofSeconds(warmTimeoutSeconds),
                line -> System.out.println("agentbox: " + line));
        teamLimits.applyTo(standalone.hub().store());
        SecretLines.printManagerToken(standalone.hub(), dir);
        if (workerMetricsPort >= 0) {
            try {
                standalone.workerMetrics().serve(management.host, workerMetricsPort);
            } catch (Exception e) {
                standalone.close();
                System.err.println("agentbox: cannot serve the worker's /metrics on " + management.host + ":"
                        + workerMetricsPort + ": " + e.getMessage() + " (choose another --worker-metrics-port, or -1)");
                return 1;
            }
            System.out.println("agentbox: metrics: hub http://" + management.host + ":" + standalone.hub().managementPort()
                    + "/metrics (manager token), worker http://" + management.host + ":"
                    + standalone.workerMetrics().port() + WorkerMetrics.PATH);
        }
        WorkerApi workerApi = null;
        if (workerApiPort >= 0) {
            try {
                workerApi = WorkerApi.start(standalone.worker(), host, workerApiPort, workerTls,
                        standalone.workerMetrics().registry());
            } catch (Exception e) {
                standalone.close();
                System.err.println("agentbox: cannot serve the worker's API on " + host + ":" + workerApiPort + ": " + e.getMessage());
                return 1;
            }
            System.out.println("agentbox: worker's own public API on " + (workerTls == null ? "http" : "https") + "://"
                    + host + ":" + workerApi.port());
        }
        WorkerApi localApi = workerApi;
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("agentbox: stopping; killing every sandbox");
            if (localApi != null) {
                localApi.close();
            }
            standalone.close();
            stopped.countDown();
        }, "agentbox-shutdown"));

        String url = (hubTls == null ? "http://" : "https://") + urlHost(hubTls) + ":" + standalone.hub().apiPort();
        Path keyFile = dir.resolve("admin-key").toAbsolutePath();
        String keyLine = standalone.hub().newAdminKey()
                .map(k -> "export E2B_API_KEY=" + k + "   # admin key, shown once; also in " + keyFile)
                .orElse("export E2B_API_KEY=$(cat " + keyFile + ")");
        System.out.println();
        System.out.println("AgentBox standalone is ready. Point any E2B SDK at it:");
        System.out.println();
        System.out.println("  export E2B_API_URL=" + url);
        System.out.println("  export E2B_SANDBOX_URL=" + url);
        System.out.println("  " + keyLine);
        System.out.println();
        System.out.println("  # then, in a directory where `npm install e2b` ran:");
        System.out.println("  node -e \"const {Sandbox}=require('e2b'); (async()=>{const s=await Sandbox.create(); "
                + "console.log((await s.commands.run('uname -a')).stdout); await s.kill()})()\"");
        System.out.println();
        standalone.hub().store().template(BaseTemplate.NAME).ifPresent(t -> System.out.println(
                "Template base: " + t.getPoolSize() + " warm sandboxes, network " + t.getNetwork()
                        + switch (t.getNetwork()) {
                            case "host" -> " (sandboxes share this host's network, its loopback services included;"
                                    + " --sandbox-network isolated cuts them off and lets getHost(port) reach servers"
                                    + " inside sandboxes)";
                            case "none" -> " (loopback only, no internet; getHost(port) reaches servers inside sandboxes)";
                            default -> " (own network namespace, no access to this host; getHost(port) reaches servers"
                                    + " inside sandboxes)";
                        }));
        System.out.println("Press Ctrl-C to stop (every sandbox is removed).");
        stopped.await();
        return 0;
    }

    /** The host to print in URLs: with TLS the certificate's first DNS name (clients check it), else --host. */
    private String urlHost(ServerTls tls) throws Exception {
        if (tls != null && tls.keyPair().leaf().getSubjectAlternativeNames() != null) {
            for (List<?> name : tls.keyPair().leaf().getSubjectAlternativeNames()) {
                if (Integer.valueOf(2).equals(name.get(0))) {
                    return (String) name.get(1);
                }
            }
        }
        return "0.0.0.0".equals(host) ? "127.0.0.1" : host;
    }
}
