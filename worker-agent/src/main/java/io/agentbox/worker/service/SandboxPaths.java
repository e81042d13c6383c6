package io.agentbox.worker.service;

import io.grpc.Status;
import java.nio.file.Path;

/** Resolves client paths to absolute sandbox paths (E2B semantics: relative and ~ mean the user's home). */
final class SandboxPaths {
    static final int MAX_PATH_CHARS = 4096;

    private SandboxPaths() {}

    /**
     * @param home the acting user's home ({@link SandboxUsers#home}): what empty, {@code ~} and
     *     relative paths resolve against
     * @param emptyIsHome whether an empty path means the home directory (else INVALID_ARGUMENT)
     * @return a normalized absolute path
     */
    static String resolve(String path, String home, boolean emptyIsHome, String field) {
        if (path == null || path.isEmpty()) {
            if (emptyIsHome) {
                return home;
            }
            throw Status.INVALID_ARGUMENT.withDescription(field + " is required").asRuntimeException();
        }
        if (path.length() > MAX_PATH_CHARS || path.indexOf('\0') >= 0) {
            throw Status.INVALID_ARGUMENT.withDescription(field + " must be at most " + MAX_PATH_CHARS
                    + " characters without NUL").asRuntimeException();
        }
        String p = path;
        if (p.equals("~")) {
            p = home;
        } else if (p.startsWith("~/")) {
            p = home + p.substring(1);
        } else if (!p.startsWith("/")) {
            p = home + "/" + p;
        }
        return Path.of(p).normalize().toString();
    }
}
