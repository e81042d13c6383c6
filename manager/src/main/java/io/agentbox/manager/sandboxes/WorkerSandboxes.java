package io.agentbox.manager.sandboxes;

import io.agentbox.manager.routing.ClusterRouter;
import io.agentbox.manager.store.ApiStore;
import io.agentbox.manager.store.SandboxLifecycle;
import io.agentbox.manager.store.SandboxRecord;
import io.agentbox.manager.store.StoreException;
import io.agentbox.protocol.SandboxIds;
import io.agentbox.protocol.v1.ListSandboxesRequest;
import io.agentbox.protocol.v1.SandboxInfo;
import io.agentbox.protocol.v1.SandboxRef;
import io.agentbox.protocol.v1.SandboxServiceGrpc;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker is the source of truth for the sandboxes it runs; this keeps an {@link ApiStore}'s
 * records in line with it. A sandbox the store lacks is <em>adopted</em> (recorded from the
 * worker's {@link SandboxInfo}, owner = its team), so sandboxes created through another API (the
 * hub's, a worker's own) or lost by a hub restart are listed, reachable and killable by their
 * owner; a record whose sandbox the worker no longer runs is ended with reason {@value #GONE}.
 * Thread-safe.
 */
public final class WorkerSandboxes {
    /** End reason of a record whose sandbox its worker no longer runs. */
    public static final String GONE = "gone";
    /** Deadline of a lookup or listing on the worker, in milliseconds. */
    static final long CALL_TIMEOUT_MS = 10_000;
    private static final Logger log = LoggerFactory.getLogger(WorkerSandboxes.class);

    private final ApiStore store;
    private final ClusterRouter router;

    public WorkerSandboxes(ApiStore store, ClusterRouter router) {
        this.store = store;
        this.router = router;
    }

    /**
     * The live record of {@code sandboxId}: the store's when it has a running one, else the one
     * adopted from the sandbox's worker (asked when its cluster is connected). Empty when neither
     * knows it running.
     */
    public Optional<SandboxRecord> find(String sandboxId) {
        Optional<SandboxRecord> known = store.sandbox(sandboxId).filter(r -> !r.ended());
        if (known.isPresent() || !SandboxIds.isValidSandboxId(sandboxId) || store.sandbox(sandboxId).isPresent()) {
            return known;
        }
        String cluster = SandboxIds.clusterOf(sandboxId);
        Channel channel = router.channel(cluster);
        if (channel == null) {
            return Optional.empty();
        }
        try {
            SandboxInfo info = SandboxServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                    .getSandbox(SandboxRef.newBuilder().setSandboxId(sandboxId).build());
            return adopt(cluster, info);
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() != Status.Code.NOT_FOUND) {
                log.debug("cannot ask cluster {} about sandbox {}: {}", cluster, sandboxId, e.getStatus());
            }
            return Optional.empty();
        }
    }

    /**
     * Records a sandbox the worker reported, unless it is recorded already (running or ended) or
     * has no owner; returns the live record, empty when it could not be adopted.
     */
    public Optional<SandboxRecord> adopt(String clusterId, SandboxInfo info) {
        Optional<SandboxRecord> known = store.sandbox(info.getSandboxId());
        if (known.isPresent()) {
            return known.filter(r -> !r.ended());
        }
        if (info.getOwner().isEmpty() || info.getTemplate().isEmpty()) {
            return Optional.empty(); // nobody could see it: the store needs a team and a template
        }
        long now = System.currentTimeMillis();
        SandboxRecord r = new SandboxRecord(info.getSandboxId(), clusterId, info.getTemplate(), info.getOwner(),
                info.getMetadataMap(), info.getStartedAtMs() > 0 ? info.getStartedAtMs() : now,
                info.getEndAtMs() > 0 ? info.getEndAtMs() : now, false, null,
                new SandboxLifecycle(info.getAutoPause(), !info.getAutoPauseDropMemory(), info.getAutoResume()),
                info.getPausedAtMs());
        try {
            store.insertSandbox(r);
            log.info("adopted sandbox {} of team {} on cluster {}", r.sandboxId(), r.team(), clusterId);
            return Optional.of(r);
        } catch (StoreException e) {
            if (e.reason() == StoreException.Reason.CONFLICT) { // recorded meanwhile (its create, a concurrent adoption)
                return store.sandbox(info.getSandboxId()).filter(x -> !x.ended());
            }
            log.warn("cannot adopt sandbox {} of cluster {}: {}", info.getSandboxId(), clusterId, e.getMessage());
            return Optional.empty();
        }
    }

    /**
     * Brings the store in line with everything cluster {@code clusterId} runs: adopts what it
     * lacks, ends the records (taken before the worker was asked, so a create racing with this
     * cannot be ended) whose sandbox the worker no longer has.
     *
     * @return how many records were adopted and ended, {@code {adopted, ended}}
     * @throws StatusRuntimeException when the worker cannot be asked (nothing is changed then)
     */
    public int[] reconcile(String clusterId) {
        Channel channel = router.channel(clusterId);
        if (channel == null) {
            throw Status.UNAVAILABLE.withDescription("cluster '" + clusterId + "' is not connected").asRuntimeException();
        }
        List<SandboxRecord> before = store.activeSandboxes(null).stream()
                .filter(r -> r.clusterId().equals(clusterId)).toList();
        List<SandboxInfo> running = SandboxServiceGrpc.newBlockingStub(channel).withWaitForReady()
                .withDeadlineAfter(CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                .listSandboxes(ListSandboxesRequest.getDefaultInstance()).getSandboxesList();
        Set<String> ids = new HashSet<>();
        int adopted = 0;
        for (SandboxInfo info : running) {
            ids.add(info.getSandboxId());
            if (store.sandbox(info.getSandboxId()).isEmpty() && adopt(clusterId, info).isPresent()) {
                adopted++;
            }
        }
        int ended = 0;
        for (SandboxRecord r : before) {
            if (!ids.contains(r.sandboxId()) && store.markEnded(r.sandboxId(), GONE)) {
                ended++;
            }
        }
        if (adopted > 0 || ended > 0) {
            log.info("cluster {}: adopted {} sandboxes, ended {} records of sandboxes it no longer runs",
                    clusterId, adopted, ended);
        }
        return new int[] {adopted, ended};
    }
}
