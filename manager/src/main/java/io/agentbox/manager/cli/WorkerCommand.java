package io.agentbox.manager.cli;

import io.agentbox.worker.WorkerAgent;
import io.agentbox.worker.WorkerDirs;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "worker", mixinStandardHelpOptions = true,
        description = "A worker cluster: dials the hub and runs warm pools of local sandboxes.")
final class WorkerCommand implements Callable<Integer> {
    @Option(names = "--hub", required = true, description = "The hub's tunnel endpoint, e.g. ws://hub:9003/v1/tunnel.")
    URI hub;

    @Option(names = "--cluster-id", required = true, description = "This cluster's id (lowercase letters, digits, '-').")
    String clusterId;

    @Option(names = "--token-file", required = true, description = "File holding the cluster token.")
    Path tokenFile;

    @Option(names = "--data-dir", description = "Where sandbox layers live (default: $AGENTBOX_DATA_DIR or ~/.agentbox, plus /worker).")
    Path dataDir;

    @Override
    public Integer call() throws Exception {
        String token = Files.readString(tokenFile, StandardCharsets.UTF_8).trim();
        Path dir = WorkerDirs.sandboxDataDir(dataDir != null ? dataDir : DataDirs.defaultDataDir().resolve("worker"));
        WorkerAgent agent = WorkerAgent.start(hub, clusterId, token, dir);
        System.out.println("agentbox: worker " + clusterId + " dialing " + hub);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            agent.close();
            stopped.countDown();
        }, "agentbox-shutdown"));
        stopped.await();
        return 0;
    }
}
