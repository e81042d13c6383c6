package io.agentbox.worker.runtime.kubernetes;

import io.agentbox.protocol.image.ImageReference;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.runtime.kubernetes.model.SandboxSettings;
import java.util.Set;

/** Turns a hub template (sync.proto {@code Template}) into the {@code spec.sandbox} of its SandboxPool. */
final class TemplateSettings {
    /** Kubernetes has no per-pod PID limit; this is what a sandbox would get elsewhere (sync.proto: 0 = 1024). */
    static final int DEFAULT_PIDS_LIMIT = 1024;
    private static final Set<String> NETWORKS = Set.of(SandboxSettings.ISOLATED, SandboxSettings.NONE, SandboxSettings.HOST);

    private TemplateSettings() {}

    /**
     * The template's image (normalised again, so a pod never carries a short name), limits (0 =
     * none) and network ({@code isolated} when empty).
     *
     * @throws IllegalArgumentException naming the template and the field: an unparsable image, a
     *     network other than isolated/none/host, or a limit beyond {@link Integer#MAX_VALUE}
     *     (the proto fields are unsigned)
     */
    static SandboxSettings of(Template t) {
        SandboxSettings s = new SandboxSettings();
        String where = "template '" + t.getName() + "': ";
        if (!t.getImage().isEmpty()) {
            try {
                s.setImage(ImageReference.parse(t.getImage()).toString());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + e.getMessage(), e);
            }
        }
        s.setCpuCount(unsigned(where + "cpuCount", t.getCpuCount()));
        s.setMemoryMb(unsigned(where + "memoryMb", t.getMemoryMb()));
        s.setDiskSizeMb(unsigned(where + "diskSizeMb", t.getDiskSizeMb()));
        int pids = unsigned(where + "pidsLimit", t.getPidsLimit());
        s.setPidsLimit(pids == 0 ? DEFAULT_PIDS_LIMIT : pids);
        String network = t.getNetwork().isEmpty() ? SandboxSettings.ISOLATED : t.getNetwork();
        if (!NETWORKS.contains(network)) {
            throw new IllegalArgumentException(where + "network must be isolated, none or host, got '" + network + "'");
        }
        s.setNetwork(network);
        return s;
    }

    private static int unsigned(String what, int value) {
        if (value < 0) {
            throw new IllegalArgumentException(what + " is too large: " + Integer.toUnsignedString(value));
        }
        return value;
    }
}
