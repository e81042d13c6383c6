package io.agentbox.manager.cli;

import io.agentbox.manager.HubConfig;
import io.agentbox.manager.management.ManagementServer;
import picocli.CommandLine.Option;

/** {@code --management-host} and {@code --management-port} of the hub modes. */
final class ManagementOptions {
    @Option(names = "--management-host", defaultValue = HubConfig.DEFAULT_MANAGEMENT_HOST,
            description = "Address of the internal management API and /metrics (default: ${DEFAULT-VALUE}; it manages keys, keep it private).")
    String host;

    @Option(names = "--management-port", defaultValue = "" + ManagementServer.DEFAULT_PORT,
            description = "Port of the internal management API (default: ${DEFAULT-VALUE}; 0 = any free port).")
    int port;
}
