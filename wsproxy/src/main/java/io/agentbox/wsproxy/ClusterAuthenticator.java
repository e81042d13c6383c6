package io.agentbox.wsproxy;

/**
 * Decides whether a worker may open a tunnel for a cluster. Called on the tunnel server's event
 * loop for every upgrade request: it must answer from memory (a cache of token hashes), never
 * block on I/O.
 */
@FunctionalInterface
public interface ClusterAuthenticator {
    /**
     * @param clusterId the id the worker claims (already checked to be a well-formed cluster id)
     * @param token the bearer token it presented, never null (may be empty)
     * @return true when the token is valid for that cluster
     */
    boolean authenticate(String clusterId, String token);
}
