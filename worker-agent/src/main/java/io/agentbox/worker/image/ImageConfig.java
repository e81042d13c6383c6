package io.agentbox.worker.image;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a sandbox takes from an image's config blob (image-spec {@code config.md}, the
 * {@code config} object).
 *
 * @param env {@code NAME=VALUE} entries, applied to every command started in the sandbox
 * @param entrypoint {@code Entrypoint}, may be empty
 * @param cmd {@code Cmd}, may be empty
 * @param workingDir {@code WorkingDir}, empty when unset
 * @param user {@code User} ({@code name}, {@code uid}, {@code uid:gid}), empty when unset
 * @param labels {@code Labels}; the worker reads its own {@code io.agentbox.*} labels from built
 *     templates ({@link io.agentbox.worker.image.BuiltImageLabels}), others are kept as given
 */
public record ImageConfig(List<String> env, List<String> entrypoint, List<String> cmd, String workingDir, String user,
                          Map<String, String> labels) {
    /** The config of an image that sets nothing. */
    public static final ImageConfig EMPTY = new ImageConfig(List.of(), List.of(), List.of(), "", "");

    public ImageConfig {
        env = List.copyOf(env);
        entrypoint = List.copyOf(entrypoint);
        cmd = List.copyOf(cmd);
        workingDir = workingDir == null ? "" : workingDir;
        user = user == null ? "" : user;
        labels = labels == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(labels));
    }

    /** A config without labels. */
    public ImageConfig(List<String> env, List<String> entrypoint, List<String> cmd, String workingDir, String user) {
        this(env, entrypoint, cmd, workingDir, user, Map.of());
    }

    /** The label {@code name}, or empty when unset. */
    public String label(String name) {
        return labels.getOrDefault(name, "");
    }
}
