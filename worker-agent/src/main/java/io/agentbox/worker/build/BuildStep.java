package io.agentbox.worker.build;

import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * One instruction of a template build as the E2B SDK sends it ({@code TemplateBuildStartV2.steps[]},
 * docs/e2b-wire.md#step-types).
 *
 * @param type {@code RUN}, {@code COPY}, {@code ENV}, {@code WORKDIR}, {@code USER} as sent (any case;
 *     {@code ADD} counts as COPY and {@code ARG} as ENV, as on E2B)
 * @param args {@code RUN [cmd, user?]}, {@code COPY [src, dest, owner, mode]}, {@code ENV [k1, v1, …]},
 *     {@code WORKDIR [path]}, {@code USER [name, sudo?]}
 * @param force do not reuse a cached layer for this step
 * @param filesHash COPY only: the key of the uploaded archive (64 lowercase hex digits), else empty
 */
public record BuildStep(String type, List<String> args, boolean force, String filesHash) {
    /** Steps one build may hold. */
    public static final int MAX_STEPS = 1000;
    /** Characters of all arguments of one step. */
    public static final int MAX_ARG_CHARS = 256 * 1024;
    static final Pattern FILES_HASH = Pattern.compile("[0-9a-f]{64}");

    public BuildStep {
        type = type == null ? "" : type;
        args = List.copyOf(args);
        filesHash = filesHash == null ? "" : filesHash;
    }

    /** The kind of step, or null when E2B's builder does not know it either. */
    public String kind() {
        return switch (type.toUpperCase(Locale.ROOT)) {
            case "RUN" -> "RUN";
            case "COPY", "ADD" -> "COPY";
            case "ENV", "ARG" -> "ENV";
            case "WORKDIR" -> "WORKDIR";
            case "USER" -> "USER";
            default -> null;
        };
    }

    /**
     * Why this step cannot run as given, or null when it can.
     *
     * @return a message naming the step kind and what is wrong
     */
    public String problem() {
        String kind = kind();
        if (kind == null) {
            return "command type " + type + " is not implemented";
        }
        int chars = 0;
        for (String a : args) {
            if (a == null) {
                return kind + ": an argument is null";
            }
            chars += a.length();
        }
        if (chars > MAX_ARG_CHARS) {
            return kind + ": arguments longer than " + MAX_ARG_CHARS + " characters";
        }
        return switch (kind) {
            case "RUN" -> args.isEmpty() || args.size() > 2 || args.get(0).isBlank()
                    ? "RUN needs [command] or [command, user], got " + args.size() + " argument(s)" : null;
            case "COPY" -> args.size() < 2 || args.size() > 4 || args.get(0).isEmpty() || args.get(1).isEmpty()
                    ? "COPY needs [src, dest, owner, mode], got " + args.size() + " argument(s)"
                    : !FILES_HASH.matcher(filesHash).matches() ? "COPY " + args.get(0) + ": filesHash must be 64 lowercase hex digits"
                    : mode().isEmpty() || mode().matches("[0-7]{1,4}") ? null : "COPY " + args.get(0) + ": mode '" + mode()
                            + "' is not an octal mode";
            case "ENV" -> args.size() < 2 || args.size() % 2 != 0 ? "ENV needs key/value pairs, got " + args.size() + " argument(s)"
                    : firstBadName();
            case "WORKDIR" -> args.size() != 1 || args.get(0).isEmpty() ? "WORKDIR needs [path]" : null;
            case "USER" -> args.isEmpty() || args.size() > 2 || args.get(0).isEmpty() ? "USER needs [name] or [name, sudo]" : null;
            default -> null;
        };
    }

    private String firstBadName() {
        for (int i = 0; i < args.size(); i += 2) {
            if (!EnvExpansion.isName(args.get(i))) {
                return "ENV: '" + args.get(i) + "' is not a variable name";
            }
        }
        return null;
    }

    /** COPY: the owner argument, empty when unset. */
    String owner() {
        return args.size() > 2 ? args.get(2) : "";
    }

    /** COPY: the mode argument, empty when unset. */
    String mode() {
        return args.size() > 3 ? args.get(3) : "";
    }

    /** How the step appears in the log, E2B style ({@code RUN echo one}). */
    String describe() {
        return switch (kind() == null ? type : kind()) {
            case "RUN" -> "RUN " + args.get(0) + (args.size() > 1 && !args.get(1).isEmpty() ? " (as " + args.get(1) + ")" : "");
            case "COPY" -> "COPY " + args.get(0) + " " + args.get(1);
            default -> type + " " + String.join(" ", args);
        };
    }
}
