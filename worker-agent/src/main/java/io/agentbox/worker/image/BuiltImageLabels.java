package io.agentbox.worker.image;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The labels a template build writes into its image's config ({@code config.Labels}), so the image
 * alone says how to start sandboxes of it, on any worker that gets it: on what root it lies, the
 * start and ready commands and the build's ENV (which only the start command sees, as on E2B:
 * docs/e2b-wire.md#start-and-ready-commands, docs/e2b-wire.md#sandbox-defaults). The final USER and WORKDIR are the config's own
 * {@code User} and {@code WorkingDir}.
 */
public final class BuiltImageLabels {
    /** {@value #BUILT_IN_ROOT}: the layers lie on the runtime's built-in root (a build {@code fromTemplate('base')}). */
    public static final String BASE = "io.agentbox.base";
    public static final String BUILT_IN_ROOT = "built-in-root";
    /** Shell command started in the background when a sandbox of the image starts. */
    public static final String START_CMD = "io.agentbox.start-cmd";
    /** Shell command that exits 0 once the start command is ready. */
    public static final String READY_CMD = "io.agentbox.ready-cmd";
    /** JSON object of the build's ENV values (already expanded), for the start and ready commands. */
    public static final String BUILD_ENV = "io.agentbox.build-env";

    private static final ObjectMapper JSON = new ObjectMapper();

    private BuiltImageLabels() {}

    /** Whether a template build made the image (every build records its ENV, even an empty one). */
    public static boolean isBuilt(ImageConfig config) {
        return config.labels().containsKey(BUILD_ENV);
    }

        /** Whether the image's layers lie on the runtime's built-in root. */
    public static boolean onBuiltInRoot(ImageConfig config) {
        return BUILT_IN_ROOT.equals(config.label(BASE));
    }

    /** The build ENV the image recorded (empty when none or unreadable). */
    public static Map<String, String> buildEnv(ImageConfig config) {
        String json = config.label(BUILD_ENV);
        if (json.isEmpty()) {
            return Map.of();
        }
        try {
            return JSON.readValue(json, new TypeReference<LinkedHashMap<String, String>>() {});
        } catch (IOException e) {
            return Map.of();
        }
    }

    public static String envJson(Map<String, String> env) {
        try {
            return JSON.writeValueAsString(env);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
