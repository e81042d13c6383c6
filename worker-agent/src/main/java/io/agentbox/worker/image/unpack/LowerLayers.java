package io.agentbox.worker.image.unpack;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The unpacked layers below the one being unpacked, asked for only when a hardlink names a file
 * the layer itself does not hold (it is then copied up from them, as the OCI layer spec allows).
 */
@FunctionalInterface
public interface LowerLayers {
    /** No lower layers: a hardlink to a missing target fails the layer. */
    LowerLayers NONE = List::of;

    /** Layer directories in overlayfs form, the topmost first; may block until they are unpacked. */
    List<Path> topFirst() throws IOException;
}
