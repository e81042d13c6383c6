package io.agentbox.manager.builds;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Self-authenticating upload links for COPY archives (docs/e2b-wire.md#archive-upload): the SDK's
 * PUT carries no API key (and Python drops returned headers), so the link's query holds an
 * expiry and an HMAC-SHA256 over (template id, files hash, expiry) with a hub secret.
 */
public final class UploadTokens {
    /** How long a link is good for (the SDK's per-upload timeout is 1 h). */
    public static final long VALID_SECONDS = 3600;

    private final byte[] secret;

    /** @param secret at least 32 random bytes, stable across restarts */
    public UploadTokens(byte[] secret) {
        if (secret.length < 32) {
            throw new IllegalArgumentException("upload token secret must be at least 32 bytes");
        }
        this.secret = secret.clone();
    }

    /** The token for an upload of {@code hash} to {@code templateId} good until {@code expiresEpochSeconds}. */
    public String sign(String templateId, String hash, long expiresEpochSeconds) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            byte[] sig = mac.doFinal((templateId + "\n" + hash + "\n" + expiresEpochSeconds).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(sig);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** True when {@code token} was made by {@link #sign} for these values and has not expired at {@code nowEpochSeconds}. */
    public boolean verify(String templateId, String hash, String expires, String token, long nowEpochSeconds) {
        if (expires == null || token == null || !expires.matches("[0-9]{1,12}")) {
            return false;
        }
        long exp = Long.parseLong(expires);
        if (exp < nowEpochSeconds) {
            return false;
        }
        byte[] want = sign(templateId, hash, exp).getBytes(StandardCharsets.US_ASCII);
        return MessageDigest.isEqual(want, token.getBytes(StandardCharsets.US_ASCII));
    }
}
