package io.agentbox.manager.cli;

import io.agentbox.worker.image.RegistrySettings;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** How the worker reaches image registries, shared by {@code worker} and {@code standalone}. */
final class RegistryOptions {
    @Option(names = "--insecure-registry", paramLabel = "HOST:PORT", description = "Pull from this registry over plain "
            + "HTTP instead of HTTPS (repeatable), e.g. a registry on this host: 127.0.0.1:5000. Credentials come "
            + "from the hub's cluster config (setting registry.auth.HOST:PORT).")
    List<String> insecureRegistries = new ArrayList<>();

    /** @throws CommandLine.ParameterException naming a value that is not HOST:PORT */
    RegistrySettings toSettings(Object command) {
        try {
            return RegistrySettings.of(insecureRegistries);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(command), "--insecure-registry: " + e.getMessage());
        }
    }
}
