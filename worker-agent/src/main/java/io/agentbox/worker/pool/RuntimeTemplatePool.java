package io.agentbox.worker.pool;

import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.runtime.RuntimePool;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.SandboxClaim;
import io.grpc.Status;

/** A {@link TemplatePool} backed by a pool that its runtime keeps itself (see PoolingRuntime). */
final class RuntimeTemplatePool implements TemplatePool {
    private static final long POLL_MS = 20;

    private final String runtime;
    private final RuntimePool pool;
    private final String clusterId;
    private volatile Template template;

    RuntimeTemplatePool(String runtime, RuntimePool pool, Template template, String clusterId) {
        this.runtime = runtime;
        this.pool = pool;
        this.template = template;
        this.clusterId = clusterId;
    }

    @Override
    public Template template() {
        return template;
    }

    @Override
    public String runtime() {
        return runtime;
    }

    @Override
    public int idle() {
        return pool.idle();
    }

    @Override
    public int headroom() {
        return pool.headroom();
    }

    @Override
    public void update(Template next) {
        template = next;
        pool.update(next);
    }

    @Override
    public RuntimeSandbox take(SandboxClaim claim) {
        long deadline = System.nanoTime() + SandboxPools.CLAIM_WAIT.toNanos();
        while (true) {
            RuntimeSandbox s = pool.claim(claim);
            if (s != null) {
                return s;
            }
            if (System.nanoTime() > deadline) {
                throw Status.RESOURCE_EXHAUSTED.withDescription("no idle sandbox of template '" + template.getName()
                        + "' on cluster " + clusterId + " within " + SandboxPools.CLAIM_WAIT.toSeconds() + " s")
                        .asRuntimeException();
            }
            try {
                Thread.sleep(POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw Status.CANCELLED.withDescription("interrupted while waiting for a sandbox").asRuntimeException();
            }
        }
    }

    @Override
    public void released() {
        // the runtime refills on its own
    }

    @Override
    public void refill() {
        // the runtime refills on its own
    }

    @Override
    public void retire() {
        pool.retire();
    }

    @Override
    public void close() {
        pool.close();
    }
}
