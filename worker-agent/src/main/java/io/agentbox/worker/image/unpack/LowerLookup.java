package io.agentbox.worker.image.unpack;

import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;

/**
 * Finds a path in a stack of unpacked layers as the merged overlay would show it: the topmost
 * layer holding it wins, a whiteout hides it, an opaque directory hides everything below it, a
 * non-directory on the way hides the rest. Symlinks on the way are not followed (tar hardlink
 * targets are literal paths).
 */
final class LowerLookup {
    /** Where the path was found: the layer root, the file, its attributes. */
    record Found(Path layer, Path path, BasicFileAttributes attrs) {}

    private LowerLookup() {}

    /** @return null when the merged lower view has no {@code rel} */
    static Found find(List<Path> topFirst, String rel) throws IOException {
        String[] parts = rel.split("/");
        for (Path layer : topFirst) {
            boolean opaqueAbove = isOpaque(layer);
            Path cur = layer;
            boolean missing = false;
            for (int i = 0; i < parts.length; i++) {
                cur = cur.resolve(parts[i]);
                BasicFileAttributes a = LayerUnpacker.attrs(cur);
                if (a == null) {
                    missing = true;
                    break;
                }
                if (LayerUnpacker.isWhiteout(cur, a)) {
                    return null;
                }
                if (i == parts.length - 1) {
                    return new Found(layer, cur, a);
                }
                if (!a.isDirectory()) {
                    return null;
                }
                opaqueAbove |= isOpaque(cur);
            }
            if (missing && opaqueAbove) {
                return null;
            }
        }
        return null;
    }

    private static boolean isOpaque(Path dir) throws IOException {
        byte[] v = FileOps.userXattr(dir, "overlay.opaque");
        return v != null && v.length == 1 && v[0] == 'y';
    }
}
