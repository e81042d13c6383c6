package io.agentbox.worker.image.store;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/** {@code sha256:<64 lowercase hex>} digests (image-spec {@code descriptor.md}; the only algorithm accepted). */
public final class Digests {
    private static final Pattern SHA256 = Pattern.compile("sha256:[a-f0-9]{64}");

    private Digests() {}

    /** The hex part of {@code digest}; @throws IOException naming {@code what} when it is not a sha256 digest */
    public static String hex(String digest, String what) throws IOException {
        if (digest == null || !SHA256.matcher(digest).matches()) {
            throw new IOException(what + ": '" + digest + "' is not a sha256 digest (sha256: and 64 lowercase hex digits)");
        }
        return digest.substring("sha256:".length());
    }

    public static boolean isValid(String digest) {
        return digest != null && SHA256.matcher(digest).matches();
    }

    public static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    public static String of(byte[] data) {
        return "sha256:" + HexFormat.of().formatHex(sha256().digest(data));
    }

    public static String of(MessageDigest finished) {
        return "sha256:" + HexFormat.of().formatHex(finished.digest());
    }

    /** Digest of a file's contents. */
    public static String ofFile(Path file) throws IOException {
        MessageDigest md = sha256();
        byte[] buf = new byte[128 * 1024];
        try (InputStream in = Files.newInputStream(file)) {
            int n;
            while ((n = in.read(buf)) > 0) {
                md.update(buf, 0, n);
            }
        }
        return of(md);
    }
}
