package io.agentbox.manager.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * API key format and hashing.
 *
 * <p>Keys look like {@code e2b_<40 lowercase hex chars>}: the Python E2B SDK insists on
 * {@code ^e2b_[0-9a-f]+$} (docs/e2b-wire.md#api-keys). Only the hex SHA-256 of a key is ever stored.
 */
public final class ApiKeys {
    public static final String PREFIX = "e2b_";
    private static final SecureRandom RANDOM = new SecureRandom();

    private ApiKeys() {}

    /** A fresh key: {@code e2b_} + 160 random bits as 40 hex chars. */
    public static String newKey() {
        byte[] raw = new byte[20];
        RANDOM.nextBytes(raw);
        return PREFIX + HexFormat.of().formatHex(raw);
    }

    /** Lowercase hex SHA-256 of the UTF-8 bytes of {@code key} (64 chars). */
    public static String hash(String key) {
        return HexFormat.of().formatHex(sha256(key.getBytes(StandardCharsets.UTF_8)));
    }

    static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from the JDK", e);
        }
    }
}
