package io.agentbox.manager;

import io.agentbox.manager.store.ApiKeyRecord;
import io.agentbox.manager.store.ChangeLog;
import io.agentbox.manager.store.HubStore;
import io.agentbox.protocol.v1.ApiKey;
import io.agentbox.protocol.v1.Template;
import io.agentbox.wsproxy.sync.MutableWatchSource;
import java.util.List;

/**
 * Keeps the in-memory watch sources the tunnel's sync service serves in step with the store: after
 * every committed template or API key change the full set is reloaded. A stopgap until the watches
 * read the store's change log themselves (resume from a version instead of full snapshots).
 */
final class StoreWatchFeed {
    private final HubStore store;
    final MutableWatchSource<Template> templates;
    final MutableWatchSource<ApiKey> apiKeys;

    StoreWatchFeed(HubStore store) {
        this.store = store;
        this.templates = new MutableWatchSource<>(store.templates());
        this.apiKeys = new MutableWatchSource<>(keys());
        store.changeLog().addListener(change -> {
            if (change.kind() == ChangeLog.Kind.TEMPLATE) {
                templates.set(store.templates());
            } else if (change.kind() == ChangeLog.Kind.API_KEY) {
                apiKeys.set(keys());
            }
        });
    }

    /** Valid keys as pushed to workers: hash, team, role, expiry; never the plaintext. */
    private List<ApiKey> keys() {
        return store.apiKeyStore().snapshot().items().stream().map(StoreWatchFeed::toProto).toList();
    }

    static ApiKey toProto(ApiKeyRecord k) {
        return ApiKey.newBuilder().setKeyHash(k.keyHash()).setTeam(k.team()).setRole(k.role())
                .setExpiresAtMs(k.expiresAtMs() == null ? 0 : k.expiresAtMs()).build();
    }
}
