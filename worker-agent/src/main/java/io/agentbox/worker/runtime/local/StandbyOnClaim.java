package io.agentbox.worker.runtime.local;

import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.image.ImageState;
import io.agentbox.worker.runtime.ClaimRequest;
import io.agentbox.worker.runtime.RuntimePool;
import io.agentbox.worker.runtime.RuntimeSandbox;
import java.time.Duration;

/**
 * A {@link LocalRuntime} pool that tells the runtime about every sandbox it hands out, so that a
 * sandbox of a template whose sandboxes get reset has a standby container before its first reset
 * ({@link LocalRuntime#claimed}). Everything else is the worker's warm pool's.
 */
final class StandbyOnClaim implements RuntimePool {
    private final LocalRuntime runtime;
    private final RuntimePool pool;

    StandbyOnClaim(LocalRuntime runtime, RuntimePool pool) {
        this.runtime = runtime;
        this.pool = pool;
    }

    @Override
    public RuntimeSandbox claim(ClaimRequest request, Duration wait) {
        RuntimeSandbox sandbox = pool.claim(request, wait);
        runtime.claimed(sandbox);
        return sandbox;
    }

    @Override
    public Template template() {
        return pool.template();
    }

    @Override
    public void update(Template next) {
        pool.update(next);
    }

    @Override
    public void released(RuntimeSandbox sandbox) {
        pool.released(sandbox);
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
    public ImageState imageState() {
        return pool.imageState();
    }

    @Override
    public String lastError() {
        return pool.lastError();
    }

    @Override
    public void retire() {
        runtime.templateGone(pool.template().getName());
        pool.retire();
    }

    @Override
    public void close() {
        pool.close();
    }
}
