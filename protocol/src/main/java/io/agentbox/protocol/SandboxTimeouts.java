package io.agentbox.protocol;

/**
 * Sandbox lifetimes, one set of numbers for hub and worker. The hub decides a sandbox's end time
 * (from the create's {@code timeout} or the template's default) and sends it in
 * {@code CreateSandboxRequest.end_at_ms}; the worker uses it as given after {@link #checkEndAt}.
 */
public final class SandboxTimeouts {
    /** Lifetime in seconds when neither the create nor the template sets one (E2B's default, 300 s). */
    public static final int DEFAULT_SECONDS = 300;
    /**
     * Longest lifetime in seconds a create, a SetTimeout or a template default may ask for: 24 h,
     * E2B's longest session (Pro plan, e2b.dev/docs/billing).
     */
    public static final int MAX_SECONDS = 24 * 3600;
    /** How far a worker's clock may be behind the hub's when it checks an end time the hub decided, ms. */
    public static final long CLOCK_SKEW_MS = 60_000;

    private SandboxTimeouts() {}

    /**
     * Why {@code endAtMs} cannot be a sandbox's end time at {@code nowMs}: not after now, or more
     * than {@link #MAX_SECONDS} (plus {@link #CLOCK_SKEW_MS}) ahead; null when it can.
     */
    public static String checkEndAt(long endAtMs, long nowMs) {
        if (endAtMs <= nowMs) {
            return "end_at_ms " + endAtMs + " is not in the future (now " + nowMs + ")";
        }
        if (endAtMs - nowMs > MAX_SECONDS * 1000L + CLOCK_SKEW_MS) {
            return "end_at_ms " + endAtMs + " is more than " + MAX_SECONDS + " s ahead (now " + nowMs + ")";
        }
        return null;
    }

    /** Why {@code seconds} cannot be a sandbox's lifetime (not 1.. {@link #MAX_SECONDS}); null when it can. */
    public static String checkSeconds(long seconds) {
        if (seconds < 1 || seconds > MAX_SECONDS) {
            return "timeout must be between 1 and " + MAX_SECONDS + " seconds, got " + seconds;
        }
        return null;
    }
}
