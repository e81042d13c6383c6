package io.agentbox.manager.quota;

import io.agentbox.manager.store.TeamLimits;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.ToIntFunction;

/**
 * Admission of sandbox creates against per-team quotas ({@link TeamLimits}): at most
 * {@code maxSandboxes} of a team's sandboxes running at once (those recorded and not past their
 * deadline, plus creates admitted and still in flight), and {@code createsPerSecond} sustained with
 * bursts of one second's worth. A create past a limit is refused ({@link Exceeded}, which the API
 * answers with 429) with a message naming the limit; other teams are not affected (each team has its own count, bucket and lock). Teams
 * without limits take no lock and no count.
 *
 * <p>Counts are per hub process: hub replicas sharing a database each enforce the rate on their
 * own, while the running count comes from the shared records.
 */
public final class TeamQuotas {
    /** Admits everything (the worker-local API, which holds no limits). */
    public static final TeamQuotas NONE = new TeamQuotas(team -> TeamLimits.NONE, team -> 0, System::nanoTime);

    /** An admitted create; {@link #close()} it once its record is stored (or the create failed). */
    public interface Slot extends AutoCloseable {
        @Override
        void close();
    }

    /** A create refused because its team is at a limit. */
    public static final class Exceeded extends RuntimeException {
        private final String limit;

        Exceeded(String limit, String message) {
            super(message, null, false, false);
            this.limit = limit;
        }

        /** The limit's field name: {@code maxSandboxes} or {@code createsPerSecond}. */
        public String limit() {
            return limit;
        }
    }

    private static final Slot FREE = () -> { };

    private final Function<String, TeamLimits> limitsOf;
    private final ToIntFunction<String> runningOf;
    private final LongSupplier nanos;
    /** One entry per team that has created under a limit: bounded by the number of teams. */
    private final Map<String, TeamState> teams = new ConcurrentHashMap<>();

    /**
     * @param limitsOf  the limits that apply to a team now (cheap: called on every create)
     * @param runningOf how many of a team's sandboxes are recorded as running (called under the team's
     *                  lock, only when it has a sandbox limit)
     * @param nanos     monotonic clock in nanoseconds
     */
    public TeamQuotas(Function<String, TeamLimits> limitsOf, ToIntFunction<String> runningOf, LongSupplier nanos) {
        this.limitsOf = limitsOf;
        this.runningOf = runningOf;
        this.nanos = nanos;
    }

    private static final class TeamState {
        int inFlight;
        TokenBucket bucket;
    }

    /**
     * Admits one create of {@code team}.
     *
     * @throws Exceeded when the team is at its sandbox limit or over its create rate
     */
    public Slot admit(String team) {
        TeamLimits limits = limitsOf.apply(team);
        if (limits.isUnlimited()) {
            return FREE;
        }
        TeamState state = teams.computeIfAbsent(team, t -> new TeamState());
        synchronized (state) {
            if (limits.maxSandboxes() != null) {
                // read under the lock: a create that finished released its slot after its record was visible
                int running = runningOf.applyAsInt(team) + state.inFlight;
                if (running >= limits.maxSandboxes()) {
                    throw new Exceeded("maxSandboxes", "team '" + team + "' has " + running + " running sandbox"
                            + (running == 1 ? "" : "es") + ", its limit is " + limits.maxSandboxes() + " (maxSandboxes); "
                            + (running > 0 ? "kill one, or " : "") + "ask the hub operator to raise the limit");
                }
            }
            if (limits.createsPerSecond() != null) {
                long now = nanos.getAsLong();
                if (state.bucket == null) {
                    state.bucket = new TokenBucket(limits.createsPerSecond(), now);
                } else if (state.bucket.rate() != limits.createsPerSecond()) {
                    state.bucket.setRate(limits.createsPerSecond());
                }
                if (!state.bucket.tryTake(now)) {
                    throw new Exceeded("createsPerSecond", "team '" + team + "' creates sandboxes faster than its limit of "
                            + limits.createsPerSecond() + " per second (createsPerSecond); retry in "
                            + state.bucket.millisUntilNext(now) + " ms");
                }
            }
            if (limits.maxSandboxes() == null) {
                return FREE;
            }
            state.inFlight++;
        }
        boolean[] closed = {false};
        return () -> {
            synchronized (state) {
                if (!closed[0]) {
                    closed[0] = true;
                    state.inFlight--;
                }
            }
        };
    }
}
