package io.agentbox.worker.runtime.kubernetes;

import io.agentbox.mux.util.DaemonThreads;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.runtime.PoolContext;
import io.agentbox.worker.runtime.RuntimePool;
import io.agentbox.worker.runtime.SandboxRuntime;
import io.agentbox.worker.runtime.kubernetes.exec.Fabric8PodExec;
import io.agentbox.worker.runtime.kubernetes.exec.PodExec;
import io.agentbox.worker.runtime.kubernetes.model.PodContract;
import io.agentbox.worker.runtime.kubernetes.model.PodPhase;
import io.agentbox.worker.runtime.kubernetes.model.SandboxPool;
import io.agentbox.worker.runtime.kubernetes.model.SandboxSettings;
import io.agentbox.worker.runtime.kubernetes.reconcile.PodFactory;
import io.agentbox.worker.runtime.kubernetes.reconcile.ReconcileQueue;
import io.agentbox.worker.runtime.kubernetes.reconcile.ReconcileResult;
import io.agentbox.worker.util.Backoff;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.grpc.Status;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code kubernetes} runtime: sandboxes are pods of SandboxPools in one namespace.
 *
 * <p>Structure: informers on the namespace's pool pods, its SandboxPools and all
 * SandboxTemplates feed in-memory caches; pod events keep each {@link KubePool}'s ready queue
 * current and trigger reconciles. A {@link ReconcileQueue} runs {@link PoolController} on events
 * and every {@code resync}: never two reconciles of one pool at once, failures retried with
 * backoff from {@code retryPeriod} up to {@code resync}. A Lease elects the one replica that
 * reconciles and claims ({@link LeaderGate});
 * on election it adopts claimed pods from their labels ({@link KubePool#recover}).
 *
 * <p>Claims never wait on the API: they pop the ready queue; {@link ClaimWriter} records them.
 * Release deletes the pod. Shutdown ({@link #close}) leaves pods and pools in place for the next
 * worker.
 */
public final class KubernetesRuntime implements SandboxRuntime {
    /** DNS label rule for pool names, leaving room for the 5-character suffix of generated pod names. */
    private static final Pattern POOL_NAME = Pattern.compile("[a-z0-9]([-a-z0-9]{0,50}[a-z0-9])?");
    /** Threads reconciling different pools at once (one pool is never reconciled by two). */
    static final int RECONCILE_WORKERS = 2;
    /** Most pools with a reconcile queued, running or waiting for a retry at once. */
    static final int MAX_RECONCILE_KEYS = 10_000;
    /** How long shutdown waits for a reconcile in progress to finish its API writes. */
    private static final Duration RECONCILE_DRAIN = Duration.ofSeconds(5);
    private static final Logger log = LoggerFactory.getLogger(KubernetesRuntime.class);

    private final KubernetesClient client;
    private final KubeRuntimeConfig config;
    private final PodExec exec;
    private final Map<String, KubePool> pools = new ConcurrentHashMap<>();
    /** Pods handed to a sandbox by this process; never handed out again. Pruned when a pod is deleted. */
    private final Set<String> handedOut = ConcurrentHashMap.newKeySet();
    private final ThreadPoolExecutor writes;
    private final ClaimWriter writer;
    private final SandboxPoolWriter poolWriter;
    /** Resync ticks and the reconcile queue's timers. */
    private final ScheduledExecutorService timers;
    private final PoolController controller;
    private final LeaderGate leader;
    private KubeCaches caches;
    private volatile boolean closed;
    /** Set when this runtime built its client and so must close it. */
    private volatile boolean ownsClient;
    private final CompletableFuture<Void> firstLeadership = new CompletableFuture<>();
    private volatile Runnable onLeadershipLost = () -> { };
    private final ReconcileQueue<String> reconciles;

    private KubernetesRuntime(KubernetesClient client, KubeRuntimeConfig config, PodExec exec) {
        this.client = client;
        this.config = config;
        this.exec = exec;
        this.writes = new ThreadPoolExecutor(config.claimWriters(), config.claimWriters(), 30, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(config.maxPendingWrites()), DaemonThreads.numbered("kube-claim-writer"));
        this.writes.allowCoreThreadTimeOut(true);
        this.writer = new ClaimWriter(client, config.namespace(), config.identity(), writes);
        this.poolWriter = new SandboxPoolWriter(client, config.namespace());
        this.timers = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("kube-reconcile-timer"));
        this.controller = new PoolController(client, this, Clock.systemUTC());
        this.leader = new LeaderGate(client, config, this::onStartLeading, this::onStopLeading);
        // a failing pool is retried after retryPeriod, doubling up to the resync period (the resync
        // reconciles it then anyway); events reconcile it at once whatever the backoff
        Duration maxRetry = config.resync().compareTo(config.retryPeriod()) > 0 ? config.resync() : config.retryPeriod();
        this.reconciles = ReconcileQueue.start("kube-reconcile", RECONCILE_WORKERS, MAX_RECONCILE_KEYS,
                Backoff.of(config.retryPeriod(), maxRetry, Backoff.Jitter.FULL), ReconcileQueue.Timer.on(timers),
                this::reconcile);
    }

    /**
     * Starts the informers (waiting for their first list) and joins the leader election.
     *
     * @throws IllegalStateException when the API server cannot be listed (RBAC, connectivity, CRDs missing)
     */
    public static KubernetesRuntime start(KubernetesClient client, KubeRuntimeConfig config, PodExec exec) {
        KubernetesRuntime rt = new KubernetesRuntime(client, config, exec);
        try {
            rt.caches = KubeCaches.start(client, config.namespace(), config.resync(), rt::onPod, rt::onPodDeleted,
                    rt::requestReconcile, rt::requestAll);
        } catch (KubernetesClientException e) {
            rt.close();
            throw new IllegalStateException("cannot watch namespace " + config.namespace() + ": " + e.getMessage(), e);
        }
        rt.timers.scheduleWithFixedDelay(rt::requestAll, config.resync().toMillis(), config.resync().toMillis(),
                TimeUnit.MILLISECONDS);
        rt.leader.start();
        return rt;
    }

    /**
     * Starts the runtime with a client configured from the environment: the pod's service
     * account inside a cluster, else {@code $KUBECONFIG} or {@code ~/.kube/config}. Commands run
     * through the pod exec API. The runtime closes the client.
     *
     * @throws IllegalStateException when the API server cannot be reached or listed
     */
    public static KubernetesRuntime inCluster(KubeRuntimeConfig config) {
        KubernetesClient client = new KubernetesClientBuilder().build();
        KubernetesRuntime rt;
        try {
            rt = start(client, config, new Fabric8PodExec(client));
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
        rt.ownsClient = true;
        return rt;
    }

    /**
     * The namespace a client configured from the environment uses: the pod's own namespace in a
     * cluster, else the kubeconfig context's; "default" when neither names one.
     */
    public static String defaultNamespace() {
        String ns = Config.autoConfigure(null).getNamespace();
        return ns == null || ns.isBlank() ? "default" : ns;
    }

    @Override
    public String name() {
        return "kubernetes";
    }

    public KubeRuntimeConfig config() {
        return config;
    }

    /** true while this replica holds the lease and may claim. */
    public boolean isLeader() {
        return leader.isLeader();
    }

    /**
     * Opens the pool of {@code template}: creates or updates its SandboxPool; claimed pods of the
     * pool that a previous worker left go to {@link PoolContext#adopt} (now, or when this replica
     * becomes the leader).
     *
     * @throws io.grpc.StatusRuntimeException INVALID_ARGUMENT when the template's name is not a
     *     valid pool name (lowercase DNS label of at most 52 characters), or its image, limits or
     *     network cannot be turned into a pod ({@link #settingsOf})
     */
    @Override
    public RuntimePool openPool(Template template, PoolContext context) {
        String name = template.getName();
        if (!POOL_NAME.matcher(name).matches()) {
            throw Status.INVALID_ARGUMENT.withDescription("template '" + name + "' cannot name a Kubernetes pool: use "
                    + "lowercase letters, digits and '-', at most 52 characters").asRuntimeException();
        }
        settingsOf(template);
        KubePool pool = pools.computeIfAbsent(name, k -> new KubePool(new Host(k), template, config.maxReadyPerPool(), context));
        pool.reopen(template);
        writePoolResource(pool, template.getPoolSize());
        for (Pod pod : caches.podsOf(name)) {
            pool.onPod(pod);
        }
        if (isLeader()) {
            pool.recover();
        }
        requestReconcile(name);
        return pool;
    }

    /**
     * The template's {@code spec.sandbox}.
     *
     * @throws io.grpc.StatusRuntimeException INVALID_ARGUMENT naming the template and the field
     */
    static SandboxSettings settingsOf(Template template) {
        try {
            return TemplateSettings.of(template);
        } catch (IllegalArgumentException e) {
            throw Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException();
        }
    }

    /** Writes the pool's SandboxPool ({@link SandboxPoolWriter}): {@code replicas} and its template's settings. */
    void writePoolResource(KubePool pool, int replicas) {
        poolWriter.write(pool.name(), pool.template(), replicas);
    }

    void requireLeader() {
        if (closed) {
            throw Status.UNAVAILABLE.withDescription("kubernetes runtime is shut down").asRuntimeException();
        }
        if (!isLeader()) {
            throw Status.UNAVAILABLE.withDescription("worker " + config.identity() + " is not the leader of namespace "
                    + config.namespace() + "; only the leader claims pods").asRuntimeException();
        }
    }

    private void onStartLeading() {
        for (KubePool pool : pools.values()) {
            pool.recover();
        }
        requestAll();
        firstLeadership.complete(null);
    }

    private void onStopLeading() {
        log.info("{} stopped leading", config.identity());
        pools.values().forEach(KubePool::wake); // blocked claims fail now: only the leader claims
        if (!closed) {
            onLeadershipLost.run();
        }
    }

    /** Completes the first time this replica becomes the leader. */
    public CompletableFuture<Void> firstLeadership() {
        return firstLeadership;
    }

    /**
     * Runs {@code action} (on the elector's thread) whenever this replica loses the lease while
     * the runtime is open; a worker process typically exits so that only leaders hold a tunnel.
     */
    public void onLeadershipLost(Runnable action) {
        this.onLeadershipLost = action;
    }

    private void onPod(Pod pod) {
        KubePool pool = poolOf(pod);
        if (pool != null) {
            pool.onPod(pod);
            requestReconcile(pool.name());
        }
    }

    private void onPodDeleted(Pod pod) {
        KubePool pool = poolOf(pod);
        if (pool != null) {
            pool.onPodDeleted(pod);
            requestReconcile(pool.name());
        }
        handedOut.remove(PodContract.name(pod));
    }

    private KubePool poolOf(Pod pod) {
        String name = PodContract.label(pod, PodContract.POOL);
        return name == null ? null : pools.get(name);
    }

    KubeCaches caches() {
        return caches;
    }

    KubePool pool(String poolName) {
        return pools.get(poolName);
    }

    ClaimWriter writer() {
        return writer;
    }

    void deletePod(String podName) {
        writer.delete(podName);
    }

    /** Queues a reconcile of the pool (coalesced with one already queued; run again after one in progress). */
    void requestReconcile(String poolName) {
        if (!closed) {
            reconciles.request(poolName);
        }
    }

    void requestAll() {
        for (String name : pools.keySet()) {
            requestReconcile(name);
        }
    }

    /** One reconcile, on a queue worker; only the leader writes. Exceptions are retried with backoff by the queue. */
    private ReconcileResult reconcile(String poolName) {
        if (closed || !isLeader()) {
            return ReconcileResult.done(); // becoming the leader reconciles every pool
        }
        return controller.reconcile(poolName);
    }

    void forgetPool(String poolName) {
        pools.remove(poolName);
        controller.forget(poolName);
    }

    /**
     * Steps down, stops informers and threads; pods, pools and the lease stay for the next worker.
     * Writes stop before watches close, so no watch is closed with its own writes still landing.
     */
    @Override
    public void close() {
        stopWriting();
        if (caches != null) {
            caches.close();
        }
        if (ownsClient) {
            client.close();
        }
    }

    /**
     * Stops every API write: leadership, reconciles (the one in progress finishes, queued ones are
     * dropped), claim writes and deletes (waits up to 5 s for each).
     */
    void stopWriting() {
        closed = true;
        pools.values().forEach(KubePool::wake);
        leader.close();
        reconciles.close(RECONCILE_DRAIN); // queued keys drain as no-ops: closed is set
        timers.shutdownNow();
        writes.shutdown();
        try {
            writes.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One pool's view of this runtime: only what {@link KubePool} needs, bound to its name. */
    private final class Host implements PoolHost {
        private final String pool;

        Host(String pool) {
            this.pool = pool;
        }

        @Override
        public String namespace() {
            return config.namespace();
        }

        @Override
        public String container() {
            SandboxPool resource = caches.pool(pool);
            return PodFactory.sandboxContainer(resource == null ? null : caches.template(resource.getSpec().getTemplateRef()));
        }

        @Override
        public PodExec exec() {
            return exec;
        }

        @Override
        public Duration confirmTimeout() {
            return config.confirmTimeout();
        }

        @Override
        public void requireLeader() {
            KubernetesRuntime.this.requireLeader();
        }

        @Override
        public Pod cachedPod(String podName) {
            return caches.pod(podName);
        }

        @Override
        public List<Pod> cachedPods() {
            return caches.podsOf(pool);
        }

        @Override
        public boolean handOut(String podName) {
            return handedOut.add(podName);
        }

        @Override
        public boolean isHandedOut(String podName) {
            return handedOut.contains(podName);
        }

        @Override
        public int headroom() {
            SandboxPool resource = caches.pool(pool);
            Integer max = resource == null ? null : resource.getSpec().getMaxReplicas();
            if (max == null) {
                return 0;
            }
            long live = caches.podsOf(pool).stream().filter(p -> {
                PodPhase phase = PodContract.phase(p);
                return phase != PodPhase.STOPPING && phase != PodPhase.FAILED;
            }).count();
            return (int) Math.max(0, max - live);
        }

        @Override
        public void recordClaim(KubePool owner, KubeSandbox sandbox, Pod seen) {
            writer.submit(owner, sandbox, seen);
        }

        @Override
        public void deletePod(String podName) {
            writer.delete(podName);
        }

        @Override
        public void writePoolResource(Template template, int replicas) {
            poolWriter.write(pool, template, replicas);
        }

        @Override
        public void requestReconcile() {
            KubernetesRuntime.this.requestReconcile(pool);
        }

        @Override
        public void forgetPool() {
            KubernetesRuntime.this.forgetPool(pool);
        }
    }
}
