package io.agentbox.worker.service;

import io.grpc.Status;
import java.nio.file.Path;

/** Resolves client paths to absolute sandbox paths (E2B semantics: relative and ~ mean the home). */
final class SandboxPaths {
    static final String HOME = "/home/user";
    static final int MAX_PATH_CHARS = 4096;

    private SandboxPaths() {}

    /**
     * @param emptyIsHome whether an empty path means the home directory (else INVALID_ARGUMENT)
     * @return a normalized absolute path
     */
    static String resolve(String path, boolean emptyIsHome, String field) {
        if (path == null || path.isEmpty()) {
            if (emptyIsHome) {
                return HOME;
            }
            throw Status.INVALID_ARGUMENT.withDescription(field + " is required").asRuntimeException();
        }
        if (path.length() > MAX_PATH_CHARS || path.indexOf('\0') >= 0) {
            throw Status.INVALID_ARGUMENT.withDescription(field + " must be at most " + MAX_PATH_CHARS
                    + " characters without NUL").asRuntimeException();
        }
        String p = path;
        if (p.equals("~")) {
            p = HOME;
        } else if (p.startsWith("~/")) {
            p = HOME + p.substring(1);
        } else if (!p.startsWith("/")) {
            p = HOME + "/" + p;
        }
        return Path.of(p).normalize().toString();
    }
}
