package io.agentbox.manager.nativeapi;

import io.agentbox.manager.events.EventBus;
import io.agentbox.manager.store.HubStore;
import io.agentbox.wsproxy.TunnelRegistry;

/**
 * What only the hub has and its admin routes read: the store (keys, clusters, configured templates),
 * the tunnel registry (connected clusters and their last capacity reports) and the event bus
 * {@code GET /v1/events} streams. A worker's local API has none (null), and those routes answer 501.
 */
public record HubParts(HubStore store, TunnelRegistry tunnels, EventBus events) {}
