package io.agentbox.worker.image;

import java.nio.file.Path;
import java.util.List;

/**
 * A root filesystem a runtime can start sandboxes from: unpacked layer directories in overlayfs
 * form (whiteouts and opaque markers as {@code user.overlay.*} xattrs, mounted with
 * {@code userxattr}; owners already shifted into the sandboxes' host id range) and the image's
 * config.
 *
 * @param reference what the template asked for, for messages (empty for the built-in root)
 * @param layers layer directories, bottom layer first
 * @param config the image's config
 * @param onBuiltInRoot true: {@code layers} lie on top of the runtime's built-in root (the host's
 *     root for {@code local}), as for a template built {@code fromTemplate('base')}; false: the
 *     layers are the whole file system
 */
public record SandboxImage(String reference, List<Path> layers, ImageConfig config, boolean onBuiltInRoot) {
    public SandboxImage {
        layers = List.copyOf(layers);
    }

    /** An image whose layers are the whole file system. */
    public SandboxImage(String reference, List<Path> layers, ImageConfig config) {
        this(reference, layers, config, false);
    }
}
