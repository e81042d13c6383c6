package io.agentbox.manager.cli;

import io.agentbox.manager.BaseTemplate;
import picocli.CommandLine.Option;

/** Options of the built-in {@code base} template, shared by {@code standalone} and {@code hub}. */
final class BaseTemplateOptions {
    @Option(names = "--sandbox-network", description = "Network of the base template: isolated (own network namespace, "
            + "outbound internet through NAT, no access to this host), none (loopback only) or host (shares the host's "
            + "network, its loopback services included). Default: as stored, initially isolated.")
    String sandboxNetwork;

    @Option(names = "--pool-size", defaultValue = "0", description = "Warm sandboxes of the base template per worker "
            + "(default: as stored, initially 4).")
    int poolSize;

    @Option(names = "--sandbox-runtime", description = "Worker runtime of the base template: local (crun containers) "
            + "or kubernetes (pods; workers started with --runtime kubernetes). Default: as stored, initially local.")
    String sandboxRuntime;

    BaseTemplate toBaseTemplate() {
        return new BaseTemplate(sandboxNetwork, poolSize, sandboxRuntime);
    }
}
