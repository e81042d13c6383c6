package io.agentbox.manager;

import io.agentbox.manager.store.HubStore;
import io.agentbox.manager.store.TemplateStore;
import io.agentbox.protocol.v1.Template;

/**
 * Command-line settings for the built-in template {@value #NAME}, applied to the store at start.
 *
 * @param network "isolated" (own network namespace: outbound internet through NAT, no access to
 *     the host), "none" (loopback only) or "host" (the host's network, its loopback services
 *     included); null keeps the stored value
 * @param poolSize warm sandboxes per worker; 0 keeps the stored value
 * @param runtime the worker runtime that makes its sandboxes, "local" or "kubernetes"; workers
 *     without that runtime ignore the template; null keeps the stored value
 */
public record BaseTemplate(String network, int poolSize, String runtime) {
    public static final String NAME = "base";
    public static final BaseTemplate UNCHANGED = new BaseTemplate(null, 0, null);

    /** Network and pool size only; the runtime keeps its stored value. */
    public BaseTemplate(String network, int poolSize) {
        this(network, poolSize, null);
    }

    public BaseTemplate {
        if (network != null && !TemplateStore.NETWORKS.contains(network)) {
            throw new IllegalArgumentException("sandbox network must be 'isolated', 'none' or 'host', not '" + network + "'");
        }
        if (poolSize < 0 || poolSize > 1000) {
            throw new IllegalArgumentException("pool size must be between 1 and 1000");
        }
        if (runtime != null && !runtime.equals("local") && !runtime.equals("kubernetes")) {
            throw new IllegalArgumentException("sandbox runtime must be 'local' or 'kubernetes', not '" + runtime + "'");
        }
    }

    void applyTo(HubStore store) {
        if (network == null && poolSize == 0 && runtime == null) {
            return;
        }
        Template stored = store.template(NAME).orElseThrow(() -> new IllegalStateException("template base is missing"));
        Template.Builder b = stored.toBuilder();
        if (network != null) {
            b.setNetwork(network);
        }
        if (poolSize > 0) {
            b.setPoolSize(poolSize);
        }
        if (runtime != null) {
            b.setRuntime(runtime);
        }
        store.upsertTemplate(b.build());
    }
}
