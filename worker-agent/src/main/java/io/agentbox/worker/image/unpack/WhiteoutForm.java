package io.agentbox.worker.image.unpack;

/**
 * How an OCI whiteout ({@code .wh.NAME}, image-spec {@code layer.md}) is written for overlayfs
 * mounted with {@code userxattr}. Chosen once per process from the kernel version.
 */
public enum WhiteoutForm {
    /**
     * Kernel 6.7 and later: an empty regular file NAME carrying the xattr
     * {@code user.overlay.whiteout}, its parent directory marked {@code user.overlay.opaque=x}
     * (overlayfs.rst, "Whiteouts and opaque directories"). Needs no privilege.
     */
    XATTR_FILE,
    /** Older kernels: a character device 0/0 named NAME (mknod: root or a user namespace's root). */
    CHAR_DEVICE;

    /** The form for {@code osVersion} as {@code os.version} gives it, e.g. "6.18.44-fc". */
    public static WhiteoutForm forKernel(String osVersion) {
        String[] parts = osVersion.split("[^0-9]+", 3);
        try {
            int major = Integer.parseInt(parts[0]);
            int minor = parts.length > 1 ? Integer.parseInt(parts[1]) : 0;
            return major > 6 || (major == 6 && minor >= 7) ? XATTR_FILE : CHAR_DEVICE;
        } catch (NumberFormatException e) {
            return CHAR_DEVICE;
        }
    }

    /** The form for the running kernel. */
    public static WhiteoutForm forThisKernel() {
        return forKernel(System.getProperty("os.version", "0"));
    }
}
