package io.agentbox.worker.runtime.kubernetes.reconcile;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import tools.jackson.databind.SerializationFeature;

/**
 * A short, stable fingerprint of a desired object, stored in its {@value #ANNOTATION}
 * annotation: the worker compares fingerprints instead of live objects, which the API server
 * fills with defaults. The same content gives the same value in every worker process (map entries
 * are serialised sorted by key).
 */
public final class Revision {
    /** Annotation holding the fingerprint of what the worker asked for when it wrote the object. */
    public static final String ANNOTATION = "agentbox.io/revision";

    private Revision() {}

    /** First 16 hex digits of the SHA-256 of {@code parts} serialised as JSON. */
    public static String of(Object... parts) {
        try {
            byte[] json = Serialization.jsonMapper().writer().with(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
                    .writeValueAsBytes(parts);
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(json);
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /** The fingerprint {@code meta} carries, or null. */
    public static String carried(ObjectMeta meta) {
        return meta == null || meta.getAnnotations() == null ? null : meta.getAnnotations().get(ANNOTATION);
    }
}
