package io.agentbox.manager.store;

/**
 * What the hub stores about an API key: never the plaintext, only its SHA-256.
 *
 * @param id              public id (first 16 hex chars of the hash), used to list and revoke
 * @param keyHash         lowercase hex SHA-256 of the plaintext key (64 chars)
 * @param team            owning team
 * @param role            {@code admin} or {@code user}
 * @param name            free-text label, may be empty
 * @param createdAtMs     Unix epoch milliseconds
 * @param expiresAtMs     Unix epoch milliseconds after which the key is refused; null = never
 * @param revokedAtMs     Unix epoch milliseconds of revocation; null while valid
 * @param resourceVersion hub-wide version of its last change (creation or revocation)
 */
public record ApiKeyRecord(String id, String keyHash, String team, String role, String name, long createdAtMs,
                           Long expiresAtMs, Long revokedAtMs, long resourceVersion) {
    /** Not revoked and not expired at {@code nowMs}. */
    public boolean isValidAt(long nowMs) {
        return revokedAtMs == null && (expiresAtMs == null || nowMs < expiresAtMs);
    }
}
