package io.agentbox.manager.cli;

import io.agentbox.manager.Hub;
import io.agentbox.manager.store.HubStore;
import java.nio.file.Path;

/** The lines a hub prints about secrets it created on this start (each is shown once). */
final class SecretLines {
    private SecretLines() {}

    static void printManagerToken(Hub hub, Path dataDir) {
        hub.newManagerToken().ifPresent(t -> System.out.println("agentbox: manager token for the management API (shown once; also in "
                + dataDir.resolve(HubStore.MANAGER_TOKEN_FILE).toAbsolutePath() + "): " + t));
        System.out.println("agentbox: management API on " + hub.managementPort() + " (send AGENTBOX-MANAGER-TOKEN; see docs/management-api.md)");
    }
}
