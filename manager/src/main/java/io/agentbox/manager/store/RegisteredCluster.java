package io.agentbox.manager.store;

/**
 * A cluster with a freshly issued token.
 *
 * @param record the stored cluster
 * @param token  the token its worker presents when dialing the tunnel; shown once, never stored
 */
public record RegisteredCluster(ClusterRecord record, String token) {}
