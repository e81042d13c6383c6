package io.agentbox.worker.image.unpack;

import java.nio.charset.StandardCharsets;
import java.util.StringJoiner;

/**
 * Turns a tar entry name (or hardlink target) into a path relative to the layer root, or refuses
 * it. Empty components and {@code .} are dropped ({@code ./usr//bin/} is {@code usr/bin}); an
 * absolute name or any {@code ..} component is refused outright rather than clamped, because an
 * image that tries it is hostile or broken.
 */
final class EntryNames {
    /** Linux NAME_MAX. */
    static final int MAX_COMPONENT_BYTES = 255;

    private EntryNames() {}

    /**
     * @param raw the name as the tar gives it (for messages)
     * @return the normalised relative path, "" for the layer root
     * @throws BadLayerException naming {@code entry}
     */
    static String normalise(String entry, String raw, int maxLength) throws BadLayerException {
        if (raw.length() > maxLength) {
            throw new BadLayerException(entry, "name longer than the limit of " + maxLength + " characters");
        }
        if (raw.indexOf('\0') >= 0) {
            throw new BadLayerException(entry, "name contains a NUL character");
        }
        if (raw.startsWith("/")) {
            throw new BadLayerException(entry, "absolute name '" + raw + "' is not allowed in a layer");
        }
        StringJoiner out = new StringJoiner("/");
        for (String c : raw.split("/")) {
            if (c.isEmpty() || c.equals(".")) {
                continue;
            }
            if (c.equals("..")) {
                throw new BadLayerException(entry, "'..' in '" + raw + "' would leave the layer");
            }
            if (c.getBytes(StandardCharsets.UTF_8).length > MAX_COMPONENT_BYTES) {
                throw new BadLayerException(entry, "a name component is longer than " + MAX_COMPONENT_BYTES + " bytes");
            }
            out.add(c);
        }
        return out.toString();
    }

    /** The parent of a normalised path, "" for a top-level name. */
    static String parent(String rel) {
        int slash = rel.lastIndexOf('/');
        return slash < 0 ? "" : rel.substring(0, slash);
    }

    /** The last component of a normalised path. */
    static String base(String rel) {
        return rel.substring(rel.lastIndexOf('/') + 1);
    }

    static String join(String dir, String name) {
        return dir.isEmpty() ? name : dir + "/" + name;
    }
}
