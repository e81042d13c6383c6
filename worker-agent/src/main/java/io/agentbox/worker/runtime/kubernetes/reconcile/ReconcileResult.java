package io.agentbox.worker.runtime.kubernetes.reconcile;

import java.time.Duration;

/**
 * What one reconcile asks of its {@link ReconcileQueue}: nothing more ({@link #done}), to look
 * again after a while ({@link #after}), or to be retried with backoff because it failed
 * ({@link #retry}). A reconcile never schedules anything itself.
 *
 * @param requeueAfter when to reconcile again without an event; null for not at all. For a
 *     failure: at the latest then, even if the backoff would wait longer
 * @param failure why the reconcile failed (logged by the queue), or null when it succeeded
 */
public record ReconcileResult(Duration requeueAfter, String failure) {
    private static final ReconcileResult DONE = new ReconcileResult(null, null);

    /** Converged: only an event reconciles the key again. */
    public static ReconcileResult done() {
        return DONE;
    }

    /** Succeeded; reconcile again after {@code delay} even without an event (null: {@link #done}). */
    public static ReconcileResult after(Duration delay) {
        return delay == null ? DONE : new ReconcileResult(delay, null);
    }

    /** Failed: retry after the queue's backoff for the failures so far. */
    public static ReconcileResult retry(String why) {
        return retry(why, null);
    }

    /** Failed: retry after the queue's backoff, but no later than {@code atTheLatest} (null: no bound). */
    public static ReconcileResult retry(String why, Duration atTheLatest) {
        return new ReconcileResult(atTheLatest, why == null ? "failed" : why);
    }

    public boolean failed() {
        return failure != null;
    }
}
