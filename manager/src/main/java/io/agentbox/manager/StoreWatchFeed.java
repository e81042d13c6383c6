package io.agentbox.manager;

import io.agentbox.manager.auth.ApiKeys;
import io.agentbox.manager.store.ApiKeyRecord;
import io.agentbox.manager.store.ChangeLog;
import io.agentbox.manager.store.ClusterConfig;
import io.agentbox.manager.store.ClusterRecord;
import io.agentbox.manager.store.HubStore;
import io.agentbox.manager.store.Snapshot;
import io.agentbox.manager.store.TemplateRecord;
import io.agentbox.mux.util.DaemonThreads;
import io.agentbox.protocol.v1.ApiKey;
import io.agentbox.protocol.v1.ClusterConfig.Builder;
import io.agentbox.protocol.v1.ConfigEntry;
import io.agentbox.protocol.v1.Template;
import io.agentbox.wsproxy.ClusterAuthenticator;
import io.agentbox.wsproxy.sync.HubWatches;
import io.agentbox.wsproxy.sync.WatchCache;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Feeds the watch caches the tunnel's sync service serves ({@link HubWatches}) from the hub store,
 * with the store's resource versions (so a worker resumes across hub restarts): a snapshot of each
 * collection at start, then, on one feeder thread after every committed change, the store's change
 * log in version order. A change log pruned past what was applied reloads that collection (its
 * watchers then get a snapshot). Also keeps registered clusters' token hashes in memory, for the
 * tunnel's authenticator, which runs on an event loop and must not query the database.
 */
final class StoreWatchFeed implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StoreWatchFeed.class);
    private static final int PAGE = 1000;

    private final HubStore store;
    private final HubWatches watches = HubWatches.empty();
    private final ExecutorService feeder = Executors.newSingleThreadExecutor(
            DaemonThreads.named("agentbox-watch-feed"));
    private final AtomicBoolean drainQueued = new AtomicBoolean();
    private volatile Map<String, String> tokenHashes = Map.of();
    // feeder thread only (and start, before the listener is added)
    private long templatesApplied;
    private long keysApplied;
    private long configApplied;
    private long clustersApplied;

    private StoreWatchFeed(HubStore store) {
        this.store = store;
    }

    /** Loads every collection and follows the store's changes until {@link #close()}. */
    static StoreWatchFeed start(HubStore store) {
        StoreWatchFeed f = new StoreWatchFeed(store);
        long now = store.changeLog().currentVersion();
        f.reloadTemplates();
        f.reloadKeys();
        f.reloadClusters();
        store.changeLog().addListener(change -> f.schedule());
        if (store.changeLog().currentVersion() != now) {
            f.schedule(); // a change committed while loading
        }
        return f;
    }

    HubWatches watches() {
        return watches;
    }

    /** Accepts a registered cluster's current token (constant-time compare against the cached hash). */
    ClusterAuthenticator clusterTokens() {
        return (id, token) -> {
            String hash = tokenHashes.get(id);
            return hash != null && MessageDigest.isEqual(hash.getBytes(StandardCharsets.US_ASCII),
                    ApiKeys.hash(token).getBytes(StandardCharsets.US_ASCII));
        };
    }

    private void schedule() {
        if (drainQueued.compareAndSet(false, true)) {
            try {
                feeder.execute(this::drain);
            } catch (RejectedExecutionException closed) {
                drainQueued.set(false);
            }
        }
    }

    private void drain() {
        drainQueued.set(false);
        try {
            long oldest = store.changeLog().oldestRetained();
            templatesApplied = follow(ChangeLog.Kind.TEMPLATE, templatesApplied, oldest, this::applyTemplate, this::reloadTemplates);
            keysApplied = follow(ChangeLog.Kind.API_KEY, keysApplied, oldest, this::applyKey, this::reloadKeys);
            configApplied = follow(ChangeLog.Kind.CLUSTER_CONFIG, configApplied, oldest, this::applyConfig, this::reloadClusters);
            long clustersBefore = clustersApplied;
            clustersApplied = follow(ChangeLog.Kind.CLUSTER, clustersApplied, oldest, c -> { }, () -> { });
            if (clustersApplied != clustersBefore) { // a cluster was registered, re-keyed or removed
                tokenHashes = Map.copyOf(store.clusterStore().tokenHashes());
            }
        } catch (RuntimeException e) {
            log.warn("following the store's changes failed; retrying on the next change", e);
        }
    }

    /** Applies the changes of one kind after {@code applied}; returns the new applied version. */
    private long follow(ChangeLog.Kind kind, long applied, long oldestRetained, Consumer<ChangeLog.Change> apply,
            Runnable reload) {
        if (applied + 1 < oldestRetained) {
            reload.run();
            return store.changeLog().currentVersion();
        }
        long at = applied;
        List<ChangeLog.Change> page;
        do {
            page = store.changeLog().changesSince(kind, at, PAGE);
            for (ChangeLog.Change c : page) {
                apply.accept(c);
                at = c.version();
            }
        } while (page.size() == PAGE);
        return at;
    }

    private void applyTemplate(ChangeLog.Change c) {
        var current = store.templateStore().get(c.name());
        if (c.op() == ChangeLog.Op.UPSERT && current.isPresent()) {
            upsert(watches.templates(), c.version(), toProto(current.get()));
        } else {
            delete(watches.templates(), c.version(), c.name());
        }
    }

    private void applyKey(ChangeLog.Change c) {
        store.apiKeyStore().byId(c.name()).ifPresent(k -> {
            if (c.op() == ChangeLog.Op.UPSERT && k.revokedAtMs() == null) {
                upsert(watches.apiKeys(), c.version(), toProto(k));
            } else {
                delete(watches.apiKeys(), c.version(), k.keyHash());
            }
        });
    }

    private void applyConfig(ChangeLog.Change c) {
        var cluster = store.clusterStore().get(c.name());
        if (cluster.isPresent() && c.op() == ChangeLog.Op.UPSERT) {
            upsert(watches.clusterConfigs(), c.version(), toProto(cluster.get()));
        } else {
            delete(watches.clusterConfigs(), c.version(), c.name());
        }
    }

    /** Upserts unless a reload already brought the cache past {@code version}. */
    private static <T> void upsert(WatchCache<T> cache, long version, T item) {
        if (version > cache.version()) {
            cache.upsert(version, item);
        }
    }

    private static <T> void delete(WatchCache<T> cache, long version, String key) {
        if (version > cache.version()) {
            cache.delete(version, key);
        }
    }

    private void reloadTemplates() {
        Snapshot<TemplateRecord> s = store.templateStore().snapshot();
        reset(watches.templates(), ChangeLog.Kind.TEMPLATE, s, StoreWatchFeed::toProto);
        templatesApplied = s.resourceVersion();
    }

    private void reloadKeys() {
        Snapshot<ApiKeyRecord> s = store.apiKeyStore().snapshot();
        reset(watches.apiKeys(), ChangeLog.Kind.API_KEY, s, StoreWatchFeed::toProto);
        keysApplied = s.resourceVersion();
    }

    private void reloadClusters() {
        Snapshot<ClusterRecord> s = store.clusterStore().snapshot();
        reset(watches.clusterConfigs(), ChangeLog.Kind.CLUSTER_CONFIG, s, StoreWatchFeed::toProto);
        configApplied = s.resourceVersion();
        clustersApplied = s.resourceVersion();
        tokenHashes = Map.copyOf(store.clusterStore().tokenHashes());
    }

    /**
     * Loads a snapshot into a cache, labelled with the version of that kind's last change rather
     * than the hub-wide version of the snapshot: a worker that applied that change (its watch's
     * version) then resumes after a hub restart instead of getting the whole set again. Falls
     * back to the snapshot's version when the log no longer holds the kind's last change.
     */
    private <R, T> void reset(WatchCache<T> cache, ChangeLog.Kind kind, Snapshot<R> s,
            Function<R, T> toProto) {
        long version = store.changeLog().latestVersion(kind, s.resourceVersion());
        if (version == 0 && !s.items().isEmpty()) {
            version = s.resourceVersion();
        }
        if (version > cache.version()) {
            cache.reset(version, s.items().stream().map(toProto).toList());
        }
    }

    static Template toProto(TemplateRecord t) {
        return t.spec().toBuilder().clearClusters().addAllClusters(t.clusters()).build();
    }

    /** Valid keys as pushed to workers: hash, team, role, expiry; never the plaintext. */
    static ApiKey toProto(ApiKeyRecord k) {
        return ApiKey.newBuilder().setKeyHash(k.keyHash()).setTeam(k.team()).setRole(k.role())
                .setExpiresAtMs(k.expiresAtMs() == null ? 0 : k.expiresAtMs()).build();
    }

    /** Host aliases become {@code host-alias/<hostname>} = IP, settings {@code setting/<name>}. */
    static io.agentbox.protocol.v1.ClusterConfig toProto(ClusterRecord c) {
        Builder b = io.agentbox.protocol.v1.ClusterConfig.newBuilder().setClusterId(c.id());
        ClusterConfig config = c.config() == null ? ClusterConfig.EMPTY : c.config();
        for (ClusterConfig.HostAlias a : config.hostAliases()) {
            for (String host : a.hostnames()) {
                b.addEntries(ConfigEntry.newBuilder().setKey("host-alias/" + host).setValue(a.ip()));
            }
        }
        new TreeMap<>(config.settings()).forEach((k, v) ->
                b.addEntries(ConfigEntry.newBuilder().setKey("setting/" + k).setValue(v)));
        return b.build();
    }

    @Override
    public void close() {
        feeder.shutdownNow();
    }
}
