package io.agentbox.manager.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * envd access tokens ({@code envdAccessToken} of the E2B {@code Sandbox} response, sent back by
 * the SDK as {@code X-Access-Token}; docs/e2b-wire.md#access-token-and-signed-urls).
 *
 * <p>A token is the hex HMAC-SHA256 of the sandbox id under a hub secret, so any hub replica
 * checks it without a lookup and tokens survive restarts. Also verifies signed {@code /files}
 * URLs: {@code "v1_" + base64_nopad(sha256("<path>:<op>:<user>:<token>[:<exp>]"))}.
 */
public final class EnvdTokens {
    private final byte[] secret;

    public EnvdTokens(byte[] secret) {
        this.secret = secret.clone();
    }

    /** Token of {@code sandboxId}: 40 lowercase hex chars. */
    public String token(String sandboxId) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            byte[] out = mac.doFinal(sandboxId.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(out, 0, 20);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    /** Constant-time check of a presented {@code X-Access-Token}. */
    public boolean verify(String sandboxId, String presented) {
        return presented != null && MessageDigest.isEqual(
                token(sandboxId).getBytes(StandardCharsets.UTF_8), presented.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Checks a {@code /files} URL signature (docs/e2b-wire.md#access-token-and-signed-urls).
     *
     * @param operation  {@code read} or {@code write}
     * @param username   the {@code username} query value, or null/empty
     * @param expiration the {@code signature_expiration} query value (Unix seconds), or null
     */
    public boolean verifySignature(String sandboxId, String path, String operation, String username,
                                   String signature, String expiration, long nowEpochSeconds) {
        if (signature == null || path == null) {
            return false;
        }
        String raw = path + ":" + operation + ":" + (username == null ? "" : username) + ":" + token(sandboxId);
        if (expiration != null && !expiration.isEmpty()) {
            try {
                if (Long.parseLong(expiration) < nowEpochSeconds) {
                    return false;
                }
            } catch (NumberFormatException e) {
                return false;
            }
            raw += ":" + expiration;
        }
        String expected = "v1_" + Base64.getEncoder().withoutPadding()
                .encodeToString(ApiKeys.sha256(raw.getBytes(StandardCharsets.UTF_8)));
        return MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8), signature.getBytes(StandardCharsets.UTF_8));
    }
}
