package io.agentbox.worker.image.registry;

import java.util.Locale;

/**
 * The platform an image is pulled for, in OCI's names (image-spec {@code image-index.md},
 * {@code platform} object; Go's GOOS/GOARCH values).
 *
 * @param os operating system, {@code linux}
 * @param architecture {@code amd64}, {@code arm64}, ...
 * @param variant CPU variant such as {@code v8}; null or empty matches any variant
 */
public record Platform(String os, String architecture, String variant) {

    public Platform {
        if (os == null || os.isBlank() || architecture == null || architecture.isBlank()) {
            throw new IllegalArgumentException("platform needs an os and an architecture");
        }
        variant = variant == null || variant.isBlank() ? null : variant;
    }

    /** {@code linux} and this JVM's architecture mapped to its OCI name. */
    public static Platform current() {
        return new Platform("linux", ociArchitecture(System.getProperty("os.arch", "")), null);
    }

    /**
     * Maps a JVM {@code os.arch} value to the OCI/Go name ({@code x86_64} and {@code amd64} →
     * {@code amd64}, {@code aarch64} → {@code arm64}); unknown names pass through lowercased.
     */
    public static String ociArchitecture(String jvmArch) {
        String a = jvmArch.toLowerCase(Locale.ROOT);
        return switch (a) {
            case "amd64", "x86_64", "x86-64" -> "amd64";
            case "aarch64", "arm64" -> "arm64";
            case "x86", "i386", "i486", "i586", "i686" -> "386";
            case "arm", "arm32" -> "arm";
            default -> a;
        };
    }

    /** Whether an index entry with these values is an image for this platform. */
    public boolean matches(String entryOs, String entryArchitecture, String entryVariant) {
        if (!os.equals(entryOs) || !architecture.equals(entryArchitecture)) {
            return false;
        }
        return variant == null || variant.equals(entryVariant)
                // arm64 images are v8 whether or not the index says so
                || (architecture.equals("arm64") && variant.equals("v8") && (entryVariant == null || entryVariant.isEmpty()));
    }

    @Override
    public String toString() {
        return os + "/" + architecture + (variant == null ? "" : "/" + variant);
    }
}
