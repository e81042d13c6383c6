package io.agentbox.manager.testing;

import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.SandboxHost;
import io.grpc.BindableService;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Collection;
import java.util.List;

/** The real worker (bubblewrap sandboxes) behind hub tests, served in-process by {@link InProcessRouter}. */
public final class WorkerUnderTest implements AutoCloseable {
    private final SandboxHost host;

    private WorkerUnderTest(SandboxHost host) {
        this.host = host;
    }

    /**
     * @param dataDir made searchable by other users (0711) so a root worker can drop to an
     *     unprivileged uid for its sandboxes (JUnit's temp dirs are 0700)
     */
    public static WorkerUnderTest start(String clusterId, Path dataDir, Collection<Template> templates) throws IOException {
        Files.createDirectories(dataDir);
        Path tmp = Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath();
        for (Path p = dataDir.toAbsolutePath(); p != null && p.startsWith(tmp) && !p.equals(tmp); p = p.getParent()) {
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwx--x--x"));
        }
        SandboxHost host = SandboxHost.start(clusterId, dataDir);
        host.applyTemplates(templates);
        return new WorkerUnderTest(host);
    }

    /** Replaces the worker's templates, as the hub's template watch does (snapshot templates among them). */
    public void applyTemplates(Collection<Template> templates) {
        host.applyTemplates(templates);
    }

    /** The worker's gRPC services (sandbox, process, filesystem, port, template build, image). */
    public List<BindableService> services() {
        return host.grpcServices();
    }

    @Override
    public void close() {
        host.close();
    }
}
