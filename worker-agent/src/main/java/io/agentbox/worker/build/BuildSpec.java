package io.agentbox.worker.build;

import java.util.List;
import java.util.Objects;

/**
 * What to build (template_build.proto {@code TemplateBuildSpec}; E2B's {@code TemplateBuildStartV2},
 * docs/e2b-wire.md#build-spec).
 *
 * @param buildId the build's id (for names and logs)
 * @param reference where the result is recorded in the image store, e.g.
 *     {@code builds.agentbox.internal/<template id>:<build id>}
 * @param baseImage the image to start from (a reference the store holds or can pull); empty: the
 *     runtime's built-in root ({@code fromTemplate('base')})
 * @param fromTemplate true: the base is a template, whose user, workdir and build ENV the steps
 *     continue from; false: an image, whose steps start as {@code user} in its home (E2B's default
 *     user phase, docs/e2b-wire.md#default-user-phase)
 * @param steps in order; step n of E2B's numbering is {@code steps.get(n - 1)}
 * @param startCmd shell command started in every sandbox of the template, empty for none
 * @param readyCmd shell command that exits 0 once the start command is ready, empty for none
 * @param force build every step afresh (the SDK's {@code skipCache})
 * @param cpuCount CPUs of each build sandbox (0 = the runtime's default)
 * @param memoryMb memory of each build sandbox in MiB (0 = no limit); the writable layer is tmpfs and
 *     counts against it
 * @param diskSizeMb size of each build sandbox's writable layer in MiB (0 = the kernel's default)
 */
public record BuildSpec(String buildId, String reference, String baseImage, boolean fromTemplate, List<BuildStep> steps,
                        String startCmd, String readyCmd, boolean force, int cpuCount, int memoryMb, int diskSizeMb) {
    public BuildSpec {
        Objects.requireNonNull(buildId, "buildId");
        Objects.requireNonNull(reference, "reference");
        baseImage = baseImage == null ? "" : baseImage;
        steps = List.copyOf(steps);
        startCmd = startCmd == null ? "" : startCmd;
        readyCmd = readyCmd == null ? "" : readyCmd;
    }
}
