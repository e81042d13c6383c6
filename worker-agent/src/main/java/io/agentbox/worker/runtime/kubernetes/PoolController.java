package io.agentbox.worker.runtime.kubernetes;

import io.agentbox.worker.runtime.kubernetes.model.PodContract;
import io.agentbox.worker.runtime.kubernetes.model.PodPhase;
import io.agentbox.worker.runtime.kubernetes.model.SandboxPool;
import io.agentbox.worker.runtime.kubernetes.model.SandboxTemplate;
import io.agentbox.worker.runtime.kubernetes.reconcile.PodFactory;
import io.agentbox.worker.runtime.kubernetes.reconcile.PoolPlan;
import io.agentbox.worker.runtime.kubernetes.reconcile.PoolReconciler;
import io.agentbox.worker.runtime.kubernetes.reconcile.ReconcileResult;
import io.agentbox.worker.runtime.kubernetes.reconcile.Revision;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies {@link PoolReconciler} plans: creates and deletes pods and writes the pool status; keeps
 * the pool's NetworkPolicy as its network mode says ({@link PolicyWriter}).
 * Runs on the runtime's {@link io.agentbox.worker.runtime.kubernetes.reconcile.ReconcileQueue}, so
 * one pool is never reconciled twice at once; what to do next is its result, including a failure
 * the queue retries with backoff.
 *
 * <p>Pods created but not yet seen by the informer are remembered ("expected") and counted as
 * starting for {@link #EXPECTATION_TTL}, so informer lag never causes a second round of creates.
 */
final class PoolController {
    static final Duration EXPECTATION_TTL = Duration.ofSeconds(30);
    private static final String POLICY_FAILED = "cannot write its NetworkPolicy";
    private static final Logger log = LoggerFactory.getLogger(PoolController.class);

    private final KubernetesClient client;
    private final KubernetesRuntime runtime;
    private final Clock clock;
    private final PolicyWriter policies;
    /** pool -> (pod name -> the create). */
    private final Map<String, Map<String, Created>> expected = new ConcurrentHashMap<>();

    /** A pod this controller created: when, and with which {@link Revision}. */
    private record Created(Instant at, String revision) {}

    PoolController(KubernetesClient client, KubernetesRuntime runtime, Clock clock) {
        this.client = client;
        this.runtime = runtime;
        this.clock = clock;
        this.policies = new PolicyWriter(client, runtime);
    }

    /** @return done, when to look again without events, or a failure to retry with backoff */
    ReconcileResult reconcile(String poolName) {
        SandboxPool pool = runtime.caches().pool(poolName);
        if (pool == null) {
            policies.removeOrphan(poolName); // the API's garbage collector does it too, via the owner reference
            return ReconcileResult.done();
        }
        boolean policyWritten = policies.apply(pool);
        KubePool local = runtime.pool(poolName);
        if (local == null) {
            return policyWritten ? ReconcileResult.done() : ReconcileResult.retry(POLICY_FAILED);
        }
        Instant now = clock.instant();
        SandboxTemplate template = runtime.caches().template(pool.getSpec().getTemplateRef());
        Pod desired = PodFactory.newPod(pool, template, runtime.config().defaultImage());
        String revision = Revision.carried(desired.getMetadata());
        // demand and bound pods before the pods: a claim that stopped waiting before this read had
        // bound its pod while the cache showed it idle, so the later list sees it idle (so bound,
        // so running) and never as a starting pod beyond the demand (deleted as it was handed out)
        int waiting = local.waitingClaims();
        Set<String> bound = local.boundPods();
        List<Pod> pods = withExpected(poolName, runtime.caches().podsOf(poolName), now);
        PoolPlan plan;
        try {
            plan = PoolReconciler.plan(pool.getSpec(), pods, bound, waiting, revision, now,
                    startupTimeout(template), pool.getStatus(), generation(pool));
        } catch (IllegalArgumentException e) {
            log.warn("pool {}: {}", poolName, e.getMessage());
            return ReconcileResult.done(); // nothing to retry until the pool or its template changes
        }
        for (String victim : plan.delete()) {
            Pod pod = runtime.caches().pod(victim);
            PodPhase phase = pod == null ? null : PodContract.phase(pod);
            // the plan was made from reads a claim may have overtaken: a pod bound or labelled
            // since then belongs to a sandbox now
            if (local.boundPods().contains(victim) || phase == PodPhase.RUNNING) {
                continue;
            }
            // a pod a claim could take (idle, or starting here but already idle in the ready
            // queue) is handed out to the deletion first, so that exactly one of the two wins
            boolean claimable = phase == null || phase == PodPhase.IDLE || phase == PodPhase.STARTING;
            if (!claimable || local.withdrawForDeletion(victim)) {
                runtime.deletePod(victim);
            }
        }
        for (int i = 0; i < plan.create(); i++) {
            try {
                Pod created = client.pods().inNamespace(runtime.config().namespace()).resource(desired).create();
                expected.computeIfAbsent(poolName, k -> new ConcurrentHashMap<>())
                        .put(PodContract.name(created), new Created(now, revision));
            } catch (KubernetesClientException e) {
                // a ResourceQuota, the API away: the queue logs it and retries with backoff
                return ReconcileResult.retry("cannot create a pod: " + e.getMessage());
            }
        }
        if (!PoolReconciler.sameStatus(pool.getStatus(), plan.status())) {
            writeStatus(pool, plan);
        }
        Duration again = plan.requeueAfter();
        if (waiting > 0 && (again == null || again.compareTo(KubePool.WAIT_TTL) > 0)) {
            again = KubePool.WAIT_TTL; // look again when claims that gave up stop counting as demand
        }
        return policyWritten ? ReconcileResult.after(again) : ReconcileResult.retry(POLICY_FAILED, again);
    }

    private void writeStatus(SandboxPool pool, PoolPlan plan) {
        SandboxPool next = new SandboxPool();
        next.setMetadata(new ObjectMetaBuilder(pool.getMetadata()).build());
        next.setSpec(pool.getSpec());
        next.setStatus(plan.status());
        try {
            client.resources(SandboxPool.class).inNamespace(runtime.config().namespace()).resource(next).updateStatus();
        } catch (KubernetesClientException e) {
            // 409: the informer will deliver the newer pool and trigger another reconcile
            log.debug("pool {}: status write failed: {}", pool.getMetadata().getName(), e.getMessage());
        }
    }

    /** The cached pods plus created-but-unseen ones (as bare starting pods); forgets seen or stale expectations. */
    private List<Pod> withExpected(String poolName, List<Pod> cached, Instant now) {
        Map<String, Created> mine = expected.get(poolName);
        if (mine == null || mine.isEmpty()) {
            return cached;
        }
        Set<String> seen = new HashSet<>();
        for (Pod p : cached) {
            seen.add(PodContract.name(p));
        }
        List<Pod> all = new ArrayList<>(cached);
        for (var it = mine.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            Created c = e.getValue();
            if (seen.contains(e.getKey()) || c.at().plus(EXPECTATION_TTL).isBefore(now)) {
                it.remove();
            } else {
                all.add(new PodBuilder().withMetadata(new ObjectMetaBuilder().withName(e.getKey())
                        .withCreationTimestamp(c.at().toString()).addToAnnotations(Revision.ANNOTATION, c.revision())
                        .build()).build());
            }
        }
        return all;
    }

    void forget(String poolName) {
        expected.remove(poolName);
    }

    private Duration startupTimeout(SandboxTemplate template) {
        Integer s = template == null || template.getSpec() == null ? null : template.getSpec().getDefaultStartupTimeoutSeconds();
        return s == null || s <= 0 ? runtime.config().startupTimeout() : Duration.ofSeconds(s);
    }

    private static long generation(SandboxPool pool) {
        Long g = pool.getMetadata().getGeneration();
        return g == null ? 0 : g;
    }
}
