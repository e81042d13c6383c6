package io.agentbox.worker.image.unpack;

import java.io.IOException;

/**
 * A layer that cannot be unpacked as given: an entry escaping the layer, an owner outside the
 * sandbox id range, a limit passed, a malformed tar. The message names the entry.
 */
public final class BadLayerException extends IOException {
    private final String entry;

    public BadLayerException(String entry, String problem) {
        super(entry == null ? problem : "entry '" + entry + "': " + problem);
        this.entry = entry;
    }

    /** The entry name as the tar gives it; null when the problem is the whole layer. */
    public String entry() {
        return entry;
    }
}
