package io.agentbox.manager.nativeapi;

import io.agentbox.manager.store.HubStore;
import io.agentbox.wsproxy.TunnelRegistry;

/**
 * What only the hub has and its admin routes read: the store (keys, clusters, configured templates)
 * and the tunnel registry (connected clusters and their last capacity reports). A worker's local
 * API has none (null), and its admin routes answer 501.
 */
public record HubParts(HubStore store, TunnelRegistry tunnels) {}
