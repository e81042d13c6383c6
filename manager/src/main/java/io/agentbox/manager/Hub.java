package io.agentbox.manager;

import io.agentbox.manager.api.ApiServer;
import io.agentbox.manager.events.EventBus;
import io.agentbox.manager.nativeapi.HubParts;
import io.agentbox.manager.sandboxes.WorkerSandboxes;
import io.agentbox.manager.store.ApiStore;
import io.agentbox.manager.http.Limits;
import io.agentbox.manager.builds.TemplateBuilds;
import io.agentbox.manager.quota.TeamQuotas;
import io.agentbox.manager.routing.TunnelClusterRouter;
import io.agentbox.manager.management.HubMetrics;
import io.agentbox.manager.management.ManagementServer;
import io.agentbox.manager.store.HubStore;
import io.agentbox.mux.tls.ServerTls;
import io.agentbox.mux.util.DaemonThreads;
import io.agentbox.protocol.v1.PoolCapacity;
import io.agentbox.wsproxy.ClusterAuthenticator;
import io.agentbox.wsproxy.HubTunnels;
import io.agentbox.wsproxy.blobs.BlobStore;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hub: store, tunnel endpoint (with the sync services workers call), the public API and the
 * internal management API. Assembled by {@code agentbox hub} and {@code agentbox standalone}.
 *
 * <p>Workers authenticate with their registered cluster's token (management API) or, when one is
 * configured, with the hub's shared cluster token.
 */
public final class Hub implements AutoCloseable {
    /** Ended sandboxes (and their history) are kept this long, then forgotten. */
    public static final Duration SANDBOX_HISTORY_RETENTION = Duration.ofDays(7);
    static final Duration HISTORY_SWEEP_INTERVAL = Duration.ofHours(1);
    /** How often sandboxes of disconnected clusters are checked (see {@link LostSandboxes}). */
    static final Duration LOST_SWEEP_INTERVAL = Duration.ofSeconds(5);
    /** Tries to list a (re)connected cluster's sandboxes before giving up until its next connect. */
    static final int RECONCILE_ATTEMPTS = 5;
    private static final Logger log = LoggerFactory.getLogger(Hub.class);

    private final HubStore store;
    private final StoreWatchFeed feed;
    private final HubTunnels tunnels;
    private final ApiServer api;
    private final TemplateBuilds builds;
    private final HubMetrics metrics;
    private final EventBus events;
    private final ManagementServer management;
    private final Optional<String> newAdminKey;
    private final Optional<String> newManagerToken;
    private final ServerTls tls;
    private final ServerTls tunnelTls;
    private final ScheduledExecutorService sweeper = Executors.newSingleThreadScheduledExecutor(
            DaemonThreads.named("agentbox-history-sweep"));

    private Hub(HubStore store, StoreWatchFeed feed, HubTunnels tunnels, ApiServer api, TemplateBuilds builds, HubMetrics metrics,
                EventBus events, ManagementServer management, Optional<String> newAdminKey, Optional<String> newManagerToken,
                ServerTls tls, ServerTls tunnelTls) {
        this.events = events;
        this.tls = tls;
        this.tunnelTls = tunnelTls;
        this.store = store;
        this.feed = feed;
        this.tunnels = tunnels;
        this.api = api;
        this.builds = builds;
        this.metrics = metrics;
        this.management = management;
        this.newAdminKey = newAdminKey;
        this.newManagerToken = newManagerToken;
        sweeper.scheduleWithFixedDelay(this::sweepHistory, 0, HISTORY_SWEEP_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
        LostSandboxes lost = new LostSandboxes(store.sandboxStore(), LostSandboxes.GRACE);
        sweeper.scheduleWithFixedDelay(() -> {
            try {
                lost.sweep(tunnels.registry().connected().stream().map(t -> t.clusterId())
                        .collect(Collectors.toSet()), System.currentTimeMillis());
            } catch (RuntimeException e) {
                log.warn("lost-sandbox sweep failed", e);
            }
        }, LOST_SWEEP_INTERVAL.toMillis(), LOST_SWEEP_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
        // the worker is the source of truth: on every (re)connect its sandboxes replace what the store believes
        WorkerSandboxes workers = new WorkerSandboxes(store.writeBehindApi(), new TunnelClusterRouter(tunnels));
        tunnels.registry().addConnectListener(id -> sweeper.execute(() -> reconcile(workers, id, 1)));
        tunnels.registry().connected().forEach(t -> sweeper.execute(() -> reconcile(workers, t.clusterId(), 1)));
    }

    /** Reconciles one cluster's sandboxes, retrying a few times a second apart while it stays connected. */
    private void reconcile(WorkerSandboxes workers, String clusterId, int attempt) {
        if (!tunnels.registry().isConnected(clusterId)) {
            return;
        }
        try {
            workers.reconcile(clusterId);
        } catch (RuntimeException e) {
            if (attempt >= RECONCILE_ATTEMPTS) {
                log.warn("cannot reconcile the sandboxes of cluster {} after {} attempts: {}", clusterId, attempt, e.toString());
                return;
            }
            sweeper.schedule(() -> reconcile(workers, clusterId, attempt + 1), 1, TimeUnit.SECONDS);
        }
    }

    private void sweepHistory() {
        try {
            int gone = store.sandboxStore().deleteEndedBefore(System.currentTimeMillis() - SANDBOX_HISTORY_RETENTION.toMillis());
            if (gone > 0) {
                log.info("forgot {} sandboxes that ended more than {} ago", gone, SANDBOX_HISTORY_RETENTION);
            }
        } catch (RuntimeException e) {
            log.warn("sandbox history sweep failed; retrying in {}", HISTORY_SWEEP_INTERVAL, e);
        }
    }

    /**
     * Opens the H2 store under {@code dataDir} (creating the admin key on first start), then starts the
     * tunnel endpoint, the public API and the management API (on an ephemeral loopback port). Ports may be 0.
     */
    public static Hub start(Path dataDir, String apiHost, int apiPort, String tunnelHost, int tunnelPort,
                            ClusterAuthenticator clusterAuth) throws Exception {
        return start(dataDir, apiHost, apiPort, tunnelHost, tunnelPort, clusterAuth, BaseTemplate.UNCHANGED);
    }

    /** As above, first applying command-line settings of the {@code base} template. */
    public static Hub start(Path dataDir, String apiHost, int apiPort, String tunnelHost, int tunnelPort,
                            ClusterAuthenticator clusterAuth, BaseTemplate base) throws Exception {
        return start(HubConfig.defaults(dataDir).withApi(apiHost, apiPort).withTunnel(tunnelHost, tunnelPort)
                .withManagement(HubConfig.DEFAULT_MANAGEMENT_HOST, 0).withBase(base), clusterAuth);
    }

    /**
     * Opens the store (creating the admin key and the manager token on first start), applies the
     * {@code base} template settings, then starts the tunnel endpoint, the management API and the
     * public API.
     *
     * @param sharedClusterAuth accepts workers besides registered clusters; null = registered clusters only
     */
    public static Hub start(HubConfig config, ClusterAuthenticator sharedClusterAuth) throws Exception {
        return start(config, sharedClusterAuth, null);
    }

    /**
     * As above; a non-null {@code tls} serves the public API as HTTPS and the tunnel endpoint as
     * {@code wss://} with its certificate (reloaded when its files change). The hub closes it.
     */
    public static Hub start(HubConfig config, ClusterAuthenticator sharedClusterAuth, ServerTls tls) throws Exception {
        return start(config, sharedClusterAuth, tls, tls);
    }

    /** As above with TLS for the public API ({@code tls}) and the tunnel endpoint ({@code tunnelTls}) apart; either may be null. */
    public static Hub start(HubConfig config, ClusterAuthenticator sharedClusterAuth, ServerTls tls, ServerTls tunnelTls)
            throws Exception {
        HubStore store = HubStore.open(config.store(), config.dataDir(), Clock.systemUTC());
        HubTunnels tunnels = null;
        StoreWatchFeed feed = null;
        HubMetrics metrics = null;
        ManagementServer management = null;
        ApiServer api = null;
        TemplateBuilds builds = null;
        EventBus events = new EventBus();
        try {
            Optional<String> adminKey = store.ensureAdminKey(config.presetAdminKey());
            Optional<String> managerToken = store.ensureManagerToken();
            config.base().applyTo(store);
            feed = StoreWatchFeed.start(store);
            ClusterAuthenticator registered = feed.clusterTokens();
            ClusterAuthenticator auth = (id, token) -> registered.authenticate(id, token)
                    || (sharedClusterAuth != null && sharedClusterAuth.authenticate(id, token));
            // built templates' blobs: the builds write them, workers read them over the sync service
            BlobStore blobs = BlobStore.open(
                    TemplateBuilds.blobDir(config.dataDir()));
            tunnels = new HubTunnels(config.tunnelHost(), config.tunnelPort(), auth, feed.watches(),
                    tunnelTls == null ? null : tunnelTls::nettyContext, blobs).start();
            metrics = new HubMetrics(store, tunnels.registry());
            management = new ManagementServer(store, tunnels.registry(), metrics, config.managementHost(),
                    config.managementPort());
            management.start();
            ApiStore records = store.writeBehindApi();
            TunnelClusterRouter router = new TunnelClusterRouter(tunnels);
            HubTunnels t = tunnels;
            builds = TemplateBuilds.open(store, config.dataDir(), router, (cluster, template) -> poolReport(t, cluster, template),
                    config.maxUploadBytes(), blobs);
            api = new ApiServer(records, router, config.apiHost(), config.apiPort(), Limits.DEFAULT,
                    quotas(store, records), tls, builds, metrics.registry(), new HubParts(store, tunnels.registry(), events));
            api.start();
            return new Hub(store, feed, tunnels, api, builds, metrics, events, management, adminKey, managerToken, tls, tunnelTls);
        } catch (Exception | Error e) {
            events.close();
            if (api != null) {
                api.close();
            }
            if (builds != null) {
                builds.close();
            }
            if (management != null) {
                management.close();
            }
            if (metrics != null) {
                metrics.close();
            }
            if (tunnels != null) {
                tunnels.close();
            }
            if (feed != null) {
                feed.close();
            }
            store.close();
            if (tls != null) {
                tls.close();
            }
            if (tunnelTls != null) {
                tunnelTls.close();
            }
            throw e;
        }
    }

    /** The last report of {@code template}'s pool from {@code cluster}, if it is connected and reported one. */
    private static Optional<PoolCapacity> poolReport(HubTunnels tunnels, String cluster,
                                                                                   String template) {
        return tunnels.registry().connected().stream().filter(c -> c.clusterId().equals(cluster))
                .flatMap(c -> c.pools().stream()).filter(p -> p.getTemplate().equals(template)).findFirst();
    }

    /** Team quotas over the hub store: limits from {@code team_limits}, running counts from the sandbox records. */
    static TeamQuotas quotas(HubStore store, ApiStore records) {
        return new TeamQuotas(store.teamLimitStore()::effective, team -> {
            long now = System.currentTimeMillis();
            // a record past its deadline is a sandbox its worker has ended, even before the hub marks it
            // a paused one has no deadline and still holds its memory and slot on its worker: it counts
            return (int) records.activeSandboxes(team).stream().filter(r -> r.paused() || r.endAtMs() > now).count();
        }, System::nanoTime);
    }

    public HubStore store() {
        return store;
    }

    public HubTunnels tunnels() {
        return tunnels;
    }

    /** The public API server (E2B surface, envd data plane, native {@code /v1}). */
    public ApiServer api() {
        return api;
    }

    /** The bus of {@code GET /v1/events}. */
    public EventBus events() {
        return events;
    }

    public int apiPort() {
        return api.port();
    }

    public int tunnelPort() {
        return tunnels.address().getPort();
    }

    public int managementPort() {
        return management.port();
    }

    public ManagementServer management() {
        return management;
    }

    /** The admin key's plaintext, present only on the start that created it. */
    public Optional<String> newAdminKey() {
        return newAdminKey;
    }

    /** The manager token's plaintext, present only on the start that created it. */
    public Optional<String> newManagerToken() {
        return newManagerToken;
    }

    @Override
    public void close() {
        sweeper.shutdownNow();
        try {
            events.close(); // ends the event streams first, while their connections are up
            api.close();
            builds.close();
            management.close();
            tunnels.close();
        } finally {
            feed.close();
            metrics.close();
            store.close();
            if (tls != null) {
                tls.close();
            }
            if (tunnelTls != null) {
                tunnelTls.close();
            }
        }
    }
}
