package io.agentbox.worker.image;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A read-only overlayfs mount of unpacked layers, made with mount(8) as root, the way the runtime
 * will mount them ({@code userxattr}). Closing unmounts it.
 */
public final class OverlayMount implements AutoCloseable {
    private final Path target;

    private OverlayMount(Path target) {
        this.target = target;
    }

    /** Mounts {@code topFirst} (at least one layer) on the existing directory {@code target}. */
    public static OverlayMount mount(List<Path> topFirst, Path target) throws IOException {
        String lower = topFirst.stream().map(Path::toString).collect(Collectors.joining(":"));
        run(List.of("mount", "-t", "overlay", "overlay", "-o", "ro,userxattr,lowerdir=" + lower, target.toString()));
        return new OverlayMount(target);
    }

    public Path root() {
        return target;
    }

    @Override
    public void close() throws IOException {
        run(List.of("umount", target.toString()));
    }

    static String run(List<String> cmd) throws IOException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IOException(String.join(" ", cmd) + " failed (must run as root): " + out.trim());
            }
            return out;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }
}
