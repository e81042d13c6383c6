package io.agentbox.wsproxy;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Accepts any well-formed cluster id presenting one shared token. Compares SHA-256 digests in
 * constant time so the token's length and prefix do not leak through timing.
 */
public final class SharedTokenAuthenticator implements ClusterAuthenticator {
    private final byte[] expectedDigest;

    public SharedTokenAuthenticator(String token) {
        if (token == null || token.length() < 16) {
            throw new IllegalArgumentException("cluster token must be at least 16 characters");
        }
        this.expectedDigest = sha256(token);
    }

    @Override
    public boolean authenticate(String clusterId, String token) {
        return MessageDigest.isEqual(expectedDigest, sha256(token));
    }

    static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
