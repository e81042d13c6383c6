package io.agentbox.manager;

import io.agentbox.manager.store.SandboxRecord;
import io.agentbox.manager.store.SandboxStore;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Marks the sandboxes of a cluster whose tunnel has stayed down longer than a grace period as
 * ended with reason {@value #REASON}. The cluster left routing the moment its tunnel closed; the
 * grace period lets a worker that merely redials keep its sandboxes. Not thread-safe: one sweeper
 * thread calls {@link #sweep}.
 */
final class LostSandboxes {
    private static final Logger log = LoggerFactory.getLogger(LostSandboxes.class);
    /** End reason of a sandbox whose cluster stayed disconnected past the grace period. */
    static final String REASON = "lost";
    /** Default grace period. */
    static final Duration GRACE = Duration.ofSeconds(60);

    private final SandboxStore sandboxes;
    private final long graceMillis;
    /** Cluster id -> when a sweep first saw it disconnected with live sandboxes. */
    private final Map<String, Long> downSince = new HashMap<>();

    LostSandboxes(SandboxStore sandboxes, Duration grace) {
        this.sandboxes = sandboxes;
        this.graceMillis = grace.toMillis();
    }

    /**
     * One pass: remembers when each cluster with live sandboxes was first seen disconnected, and
     * ends the sandboxes of those down for longer than the grace period.
     *
     * @param connected ids of the clusters whose tunnel is up now
     * @return how many sandboxes were marked lost
     */
    int sweep(Set<String> connected, long nowMillis) {
        Map<String, Long> stillDown = new HashMap<>();
        int lost = 0;
        for (SandboxRecord r : sandboxes.active(null)) {
            String cluster = r.clusterId();
            if (connected.contains(cluster)) {
                continue;
            }
            long since = stillDown.computeIfAbsent(cluster, c -> downSince.getOrDefault(c, nowMillis));
            if (nowMillis - since >= graceMillis && sandboxes.markEnded(r.sandboxId(), REASON)) {
                lost++;
            }
        }
        downSince.clear();
        downSince.putAll(stillDown);
        if (lost > 0) {
            log.warn("marked {} sandboxes lost: their clusters have been disconnected for more than {} ms", lost, graceMillis);
        }
        return lost;
    }
}
