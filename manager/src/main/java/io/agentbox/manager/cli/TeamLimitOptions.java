package io.agentbox.manager.cli;

import io.agentbox.manager.store.HubStore;
import io.agentbox.manager.store.StoreException;
import io.agentbox.manager.store.TeamLimitStore;
import io.agentbox.manager.store.TeamLimits;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * Hub-wide default team quotas, shared by {@code standalone} and {@code hub}. A given option
 * replaces that stored default at start (the management API's {@code PUT /internal/limits} changes
 * them later); an option left out keeps the stored value.
 */
final class TeamLimitOptions {
    @Option(names = "--team-max-sandboxes", description = "Default limit of running sandboxes per team, 0.."
            + TeamLimits.MAX_SANDBOXES + "; teams with a limit of their own keep it. Default: as stored, initially none.")
    Integer maxSandboxes;

    @Option(names = "--team-creates-per-second", description = "Default limit of sandbox creates per second per team "
            + "(bursts up to one second's worth), greater than 0. Default: as stored, initially none.")
    Double createsPerSecond;

    /** Refuses out-of-range values before anything starts. */
    void check(Object command) {
        try {
            new TeamLimits(maxSandboxes, createsPerSecond);
        } catch (StoreException e) {
            throw new CommandLine.ParameterException(new CommandLine(command), e.getMessage()
                    .replace("maxSandboxes", "--team-max-sandboxes").replace("createsPerSecond", "--team-creates-per-second"));
        }
    }

    /** Writes the given options over the stored defaults. */
    void applyTo(HubStore store) {
        if (maxSandboxes == null && createsPerSecond == null) {
            return;
        }
        TeamLimitStore limits = store.teamLimitStore();
        TeamLimits stored = limits.defaults().limits();
        limits.setDefaults(new TeamLimits(maxSandboxes, createsPerSecond).orElse(stored));
    }
}
