package io.agentbox.manager.store;

/**
 * Quotas of one team, or the hub-wide defaults. A null field is not set at this level: a team
 * falls back to the default ({@link #orElse}), and an unset default means no limit.
 *
 * @param maxSandboxes     most sandboxes of the team running at once (0 stops its creates), 0..{@value #MAX_SANDBOXES}
 * @param createsPerSecond sustained sandbox creates per second; a team that was idle may create up
 *                         to one second's worth (at least one) at once; greater than 0, at most {@value #MAX_RATE}
 */
public record TeamLimits(Integer maxSandboxes, Double createsPerSecond) {
    public static final int MAX_SANDBOXES = 1_000_000;
    public static final double MAX_RATE = 100_000;
    /** Nothing set. */
    public static final TeamLimits NONE = new TeamLimits(null, null);

    /**
     * @throws StoreException INVALID_ARGUMENT when a field is out of range
     */
    public TeamLimits {
        if (maxSandboxes != null && (maxSandboxes < 0 || maxSandboxes > MAX_SANDBOXES)) {
            throw StoreException.invalid("maxSandboxes must be between 0 and " + MAX_SANDBOXES + ", got " + maxSandboxes);
        }
        if (createsPerSecond != null && !(createsPerSecond > 0 && createsPerSecond <= MAX_RATE)) {
            throw StoreException.invalid("createsPerSecond must be greater than 0 and at most " + (long) MAX_RATE
                    + ", got " + createsPerSecond + " (to stop a team's creates set maxSandboxes to 0)");
        }
    }

    /** This level's values where set, else those of {@code defaults}. */
    public TeamLimits orElse(TeamLimits defaults) {
        return new TeamLimits(maxSandboxes != null ? maxSandboxes : defaults.maxSandboxes,
                createsPerSecond != null ? createsPerSecond : defaults.createsPerSecond);
    }

    public boolean isUnlimited() {
        return maxSandboxes == null && createsPerSecond == null;
    }
}
