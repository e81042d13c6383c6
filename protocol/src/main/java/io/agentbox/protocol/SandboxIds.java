package io.agentbox.protocol;

import java.security.SecureRandom;
import java.util.regex.Pattern;

/**
 * Sandbox and cluster identifiers.
 *
 * <p>A sandbox id is {@code <12 random base36 chars>-<clusterId>}, for example
 * {@code k3x9q0a1b2c3-local}. It is one DNS label (lowercase letters, digits and {@code -}, at most
 * 57 characters) so that E2B clients can put {@code {port}-{sandboxId}.{domain}} in a host name, and
 * it embeds the owning cluster so any hub can route it without a lookup.
 *
 * <p>A cluster id is 1..44 characters of lowercase letters, digits and {@code -}, starting with a
 * letter or digit.
 */
public final class SandboxIds {
    /** Length of the random part of a sandbox id. 36^12 ≈ 4.7e18 possible values. */
    public static final int RANDOM_LENGTH = 12;
    /** Longest sandbox id: leaves room for "65535-" in front within one 63-char DNS label. */
    public static final int MAX_SANDBOX_ID_LENGTH = 57;
    public static final int MAX_CLUSTER_ID_LENGTH = MAX_SANDBOX_ID_LENGTH - RANDOM_LENGTH - 1;

    private static final Pattern CLUSTER_ID = Pattern.compile("[a-z0-9][a-z0-9-]{0," + (MAX_CLUSTER_ID_LENGTH - 1) + "}");
    private static final Pattern SANDBOX_ID = Pattern.compile("[a-z0-9]{" + RANDOM_LENGTH + "}-[a-z0-9][a-z0-9-]*");
    private static final char[] ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz".toCharArray();
    private static final SecureRandom RANDOM = new SecureRandom();

    private SandboxIds() {}

    /** @throws IllegalArgumentException when {@code clusterId} is not a valid cluster id */
    public static String newSandboxId(String clusterId) {
        requireClusterId(clusterId);
        char[] out = new char[RANDOM_LENGTH];
        for (int i = 0; i < out.length; i++) {
            out[i] = ALPHABET[RANDOM.nextInt(ALPHABET.length)];
        }
        return new String(out) + "-" + clusterId;
    }

    public static boolean isValidClusterId(String clusterId) {
        return clusterId != null && CLUSTER_ID.matcher(clusterId).matches();
    }

    public static String requireClusterId(String clusterId) {
        if (!isValidClusterId(clusterId)) {
            throw new IllegalArgumentException("invalid cluster id '" + clusterId
                    + "': use 1-" + MAX_CLUSTER_ID_LENGTH + " lowercase letters, digits or '-', starting with a letter or digit");
        }
        return clusterId;
    }

    public static boolean isValidSandboxId(String sandboxId) {
        return sandboxId != null && sandboxId.length() <= MAX_SANDBOX_ID_LENGTH && SANDBOX_ID.matcher(sandboxId).matches();
    }

    /** The cluster a sandbox id belongs to, or {@code null} when the id is not well formed. */
    public static String clusterOf(String sandboxId) {
        if (!isValidSandboxId(sandboxId)) {
            return null;
        }
        return sandboxId.substring(RANDOM_LENGTH + 1);
    }
}
