package io.agentbox.manager.nativeapi;

import io.agentbox.manager.auth.Principal;
import io.agentbox.manager.builds.BuildRequest;
import io.agentbox.manager.e2b.ControlCore;
import io.agentbox.manager.store.TemplateBuildStore;
import io.agentbox.manager.store.TemplateBuildStore.Build;
import io.agentbox.manager.store.TemplateBuildStore.BuiltTemplate;
import io.agentbox.protocol.image.ImageReference;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * The template behind {@code POST /v1/sandboxes {"image": REF}} (docs/native-api.md#sandboxes-from-an-image):
 * one built template per team and normalised reference, named {@code image-<16 hex of the
 * reference's SHA-256>}, built from the image with no steps by the same machinery as
 * {@code POST /v1/templates}. The first create starts its build and waits for it; later ones reuse
 * the ready build (a tag is resolved once: delete the template, or name a digest, to take a newer
 * image). A failed build is built again by the next create.
 *
 * <p>Errors: 400 malformed reference; 400 when the build failed (the pull's or start's reason, with
 * where its log is); 503 when it is still building after {@link #WAIT} (the same request again
 * waits for the same build).
 */
final class ImageTemplates {
    /** How long a create waits for the image's build: below the API's 120 s connection idle timeout. */
    static final Duration WAIT = Duration.ofSeconds(90);
    static final String PREFIX = "image-";
    private static final long POLL_MS = 200;

    private final ControlCore core;
    private final Duration wait;

    ImageTemplates(ControlCore core) {
        this(core, WAIT);
    }

    ImageTemplates(ControlCore core, Duration wait) {
        this.core = core;
        this.wait = wait;
    }

    /** The normalised reference. @throws io.agentbox.manager.http.ApiException 400 when malformed */
    static String normalise(String image) {
        try {
            return ImageReference.parse(image).toString();
        } catch (IllegalArgumentException e) {
            throw V1Errors.of(400, "field 'image': '" + io.agentbox.manager.http.InputText.quote(image)
                    + "' is not an image reference: " + e.getMessage());
        }
    }

    /** The template name of {@code ref} (normalised): {@code image-} and 16 hex digits of its SHA-256. */
    static String alias(String ref) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(ref.getBytes(StandardCharsets.UTF_8));
            return PREFIX + HexFormat.of().formatHex(d, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The id of {@code who}'s ready template of {@code image}, built first when needed.
     *
     * @throws io.agentbox.manager.http.ApiException 400 bad reference or failed build; 503 still
     *     building or no cluster to build on
     */
    String readyTemplate(Principal who, String image) {
        String ref = normalise(image);
        String alias = alias(ref);
        Build b = current(who, ref, alias);
        long deadline = System.nanoTime() + wait.toNanos();
        while (!b.status().equals(TemplateBuildStore.READY) && !b.status().equals(TemplateBuildStore.ERROR)) {
            if (System.nanoTime() > deadline) {
                throw V1Errors.of(503, "the template " + alias + " for image " + ref + " is still building (build "
                        + b.buildId() + ", log at GET /v1/templates/" + b.templateId() + "/builds/" + b.buildId()
                        + "/logs); send the same request again to go on waiting");
            }
            try {
                Thread.sleep(POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw V1Errors.of(503, "the hub is stopping");
            }
            BuiltTemplate t = core.builtTemplate(who, b.templateId()).orElseThrow(() -> V1Errors.of(503,
                    "the template for image " + ref + " was deleted while it was building; send the request again"));
            b = core.build(t, b.buildId()).orElseThrow(() -> V1Errors.of(503,
                    "the build for image " + ref + " was deleted while it ran; send the request again"));
        }
        if (b.status().equals(TemplateBuildStore.ERROR)) {
            throw V1Errors.of(400, "image " + ref + " cannot serve sandboxes: " + b.reasonMessage() + " (template "
                    + b.templateId() + ", build " + b.buildId() + ": GET /v1/templates/" + b.templateId() + "/builds/"
                    + b.buildId() + "/logs; the next request builds again)");
        }
        return b.templateId();
    }

    /** The build to wait for: the newest when ready or running, else a new one. One caller at a time decides. */
    private synchronized Build current(Principal who, String ref, String alias) {
        Optional<BuiltTemplate> t = core.builtTemplate(who, alias);
        if (t.isPresent()) {
            List<Build> all = core.builds(t.get());
            if (!all.isEmpty() && (all.get(0).status().equals(TemplateBuildStore.READY)
                    || all.get(0).status().equals(TemplateBuildStore.BUILDING))) {
                return all.get(0);
            }
        }
        return core.buildTemplate(who, alias, 0, 0, new BuildRequest(ref, null, List.of(), "", "", false));
    }
}
