package io.agentbox.worker.pool;

import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.runtime.LaunchSpec;
import io.agentbox.worker.runtime.LaunchedProcess;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.PoolContext;
import io.agentbox.worker.runtime.RuntimePool;
import io.agentbox.worker.runtime.SandboxFiles;
import io.agentbox.worker.runtime.SandboxRuntime;
import java.util.function.Function;

/**
 * A sandbox with no processes, for pool tests whose subject is the pool's policy (refills,
 * waiting claims); the real runtimes are tested with real sandboxes elsewhere.
 */
class ObjectSandbox implements RuntimeSandbox {
    /** A "local" runtime whose pools hold plain {@link ObjectSandbox}es. */
    static final SandboxRuntime RUNTIME = runtime(ObjectSandbox::new);

    /** A "local" runtime whose warm pools make their sandboxes with {@code make} (given the sandbox id). */
    static SandboxRuntime runtime(Function<String, RuntimeSandbox> make) {
        return new SandboxRuntime() {
            @Override
            public String name() {
                return "local";
            }

            @Override
            public RuntimePool openPool(Template template, PoolContext context) {
                return context.warmPool(template, (id, t, image) -> make.apply(id));
            }

            @Override
            public void close() {}
        };
    }


    private final String id;
    private volatile boolean alive = true;

    ObjectSandbox(String id) {
        this.id = id;
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public boolean isAlive() {
        return alive;
    }

    @Override
    public LaunchedProcess launch(LaunchSpec spec) {
        throw new UnsupportedOperationException();
    }

    @Override
    public SandboxFiles files() {
        throw new UnsupportedOperationException();
    }

    @Override
    public void kill() {
        alive = false;
    }
}
