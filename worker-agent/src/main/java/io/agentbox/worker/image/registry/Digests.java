package io.agentbox.worker.image.registry;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/** SHA-256 content digests in OCI's {@code sha256:<64 lowercase hex>} form (image-spec {@code descriptor.md}). */
final class Digests {
    private static final Pattern SHA256 = Pattern.compile("sha256:[a-f0-9]{64}");

    private Digests() {}

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    static String of(byte[] bytes) {
        return format(sha256().digest(bytes));
    }

    static String format(byte[] sha256) {
        return "sha256:" + HexFormat.of().formatHex(sha256);
    }

    /** Whether {@code digest} is a sha256 digest we can verify (other algorithms are refused). */
    static boolean isSha256(String digest) {
        return digest != null && SHA256.matcher(digest).matches();
    }
}
