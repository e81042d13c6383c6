package io.agentbox.worker.runtime.shell;

import io.agentbox.protocol.ErrorReason;
import io.agentbox.protocol.v1.EntryInfo;
import io.agentbox.protocol.v1.FileType;
import io.agentbox.worker.runtime.SandboxFiles;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * File operations run inside the sandbox as the sandbox user (small sh scripts over coreutils
 * and GNU find), so symlinks resolve in the sandbox's mount namespace with the user's rights and
 * can never reach host files the sandbox could not reach itself. Any runtime that can start a
 * shell in its sandboxes ({@link SandboxShell}: nsenter for {@code local}, pod exec for
 * {@code kubernetes}) gets the same file semantics from this class.
 *
 * <p>Scripts signal typed failures with exit codes: 20 not found, 21 is a directory, 22 not a
 * directory, 23 already exists, 24 a FIFO or socket where a file is read; anything else is mapped from the tool's message.
 */
public final class ShellFiles implements SandboxFiles {
    /** Most entries one ListDir returns. */
    static final int MAX_LIST_ENTRIES = 10_000;
    /** Most bytes of metadata one ListDir may produce. */
    static final int MAX_LIST_BYTES = 8 * 1024 * 1024;
    static final long OP_TIMEOUT_MS = 60_000;
    private static final int FIELDS = 9;
    /** find -printf format: type, size, mode, perms, user, group, mtime, link target, path; NUL-separated. */
    private static final String FORMAT = "%y\\0%s\\0%m\\0%M\\0%u\\0%g\\0%T@\\0%l\\0%p\\0";
    /**
     * The same facts with stat(1) and readlink, which GNU coreutils and busybox print alike (busybox
     * find has no -printf): per path one line "type/size/mode/perms/user/group/mtime-seconds", then
     * the link target and the path, each ended by NUL. Run as {@code sh -c "$1" sh PATH...}.
     */
    private static final String RECORD = "for f; do stat -c '%F/%s/%a/%A/%U/%G/%Y' -- \"$f\" || continue; t=; "
            + "[ -L \"$f\" ] && t=$(readlink -- \"$f\"); printf '%s\\0%s\\0' \"$t\" \"$f\"; done";
    /** Between a temp file's hidden name and its random part. */
    private static final String TEMP_MARK = ".agentbox-";
    /** The last path segment of a {@link #write}'s temp file. */
    private static final Pattern TEMP_NAME = Pattern.compile("\\..+" + Pattern.quote(TEMP_MARK) + "[0-9a-z]+");
    private static final String SCRIPT_DISCARD = "exec rm -f -- \"$2\"";
    private static final String EXISTS = "{ [ -e \"$2\" ] || [ -L \"$2\" ]; }";

    /** Which tools the sandbox's shell scripts can count on. */
    public enum Tools {
        /** GNU find and coreutils on the sandbox's PATH. */
        GNU,
        /** busybox applets (the shell prefers them to the image's programs of the same name). */
        BUSYBOX
    }

    private final String scriptStat;
    private final String scriptList;
    private final String scriptMkdir;
    private final String scriptMove;
    private final String scriptRemove;
    private final String scriptRead;
    private final String scriptWrite;
    private final String scriptCommit;
    private final String format;
    private final Tools tools;

    private final SandboxShell sandbox;

    public ShellFiles(SandboxShell sandbox) {
        this(sandbox, Tools.GNU);
    }

    public ShellFiles(SandboxShell sandbox, Tools tools) {
        this.sandbox = sandbox;
        this.tools = tools;
        boolean gnu = tools == Tools.GNU;
        this.format = gnu ? FORMAT : RECORD;
        String stat2 = gnu ? "find \"$2\" -maxdepth 0 -printf \"$1\"" : "sh -c \"$1\" sh \"$2\"";
        String stat3 = gnu ? "find \"$3\" -maxdepth 0 -printf \"$1\"" : "sh -c \"$1\" sh \"$3\"";
        String list = gnu ? "find -H \"$2\" -mindepth 1 -maxdepth \"$3\" -printf \"$1\" 2>/dev/null"
                : "find -H \"$2\" -mindepth 1 -maxdepth \"$3\" -exec sh -c \"$1\" sh {} + 2>/dev/null";
        this.scriptStat = EXISTS + " || exit 20; exec " + stat2;
        this.scriptList = "[ -e \"$2\" ] || exit 20; [ -d \"$2\" ] || exit 22; "
                + "{ [ -r \"$2\" ] && [ -x \"$2\" ]; } || { echo \"$2: Permission denied\" >&2; exit 1; }; "
                + list + "; exit 0";
        this.scriptMkdir = EXISTS + " && exit 23; mkdir -p -- \"$2\" || exit 1; exec " + stat2;
        this.scriptMove = EXISTS + " || exit 20; mkdir -p -- \"$(dirname -- \"$3\")\" || exit 1; "
                + "mv -fT -- \"$2\" \"$3\" || exit 1; exec " + stat3;
        // busybox rm has no --preserve-root: refuse / as GNU rm does
        this.scriptRemove = EXISTS + " || exit 20; case \"$2\" in /|//) echo \"rm: it is dangerous to operate recursively on '/'\" >&2; exit 1;; esac; "
                + "exec rm -rf -- \"$2\"";
        this.scriptRead = "[ -e \"$2\" ] || exit 20; [ -d \"$2\" ] && exit 21; "
                // a FIFO would block the read until a writer comes; a socket cannot be read at all
                + "{ [ -p \"$2\" ] || [ -S \"$2\" ]; } && exit 24; exec cat -- \"$2\"";
        // a regular file (or a new one) is written to the temp $3 beside it, which scriptCommit moves
        // into place once the whole body came: a cut-off upload leaves the old file as it was. A
        // symlink, or a directory the user may not create files in, is written in place (the
        // first byte out says which: T temp, D direct)
        this.scriptWrite = "[ -d \"$2\" ] && exit 21; mkdir -p -- \"$(dirname -- \"$2\")\" || exit 1; "
                + "if [ ! -L \"$2\" ] && { [ ! -e \"$2\" ] || [ -f \"$2\" ]; } && (: > \"$3\") 2>/dev/null; then "
                + "printf T; exec cat > \"$3\"; fi; printf D; cat > \"$2\" || exit 1; exec " + stat2;
        // the replaced file's mode and owner carry over (chown only works for root, which is the case that matters)
        this.scriptCommit = "if [ -f \"$2\" ]; then chmod \"$(stat -c %a -- \"$2\")\" -- \"$3\" 2>/dev/null; "
                + "chown \"$(stat -c %u:%g -- \"$2\")\" -- \"$3\" 2>/dev/null; fi; "
                + "mv -fT -- \"$3\" \"$2\" || { rm -f -- \"$3\"; exit 1; }; exec " + stat2;
    }

    @Override
    public EntryInfo stat(String path) {
        return single(run(scriptStat, path, null), path);
    }

    @Override
    public List<EntryInfo> list(String path, int depth) {
        Result r = run(scriptList, path, Integer.toString(Math.max(1, depth)));
        List<EntryInfo> entries = parse(r.stdout, tools);
        if (entries.size() > MAX_LIST_ENTRIES) {
            throw ErrorReason.LIMIT_REACHED.exception(Status.Code.RESOURCE_EXHAUSTED, "'" + path + "' holds more than "
                    + MAX_LIST_ENTRIES + " entries at depth " + depth);
        }
        return entries;
    }

    @Override
    public EntryInfo makeDir(String path) {
        return single(run(scriptMkdir, path, null), path);
    }

    @Override
    public EntryInfo move(String source, String destination) {
        return single(run(scriptMove, source, destination), destination);
    }

    @Override
    public void remove(String path) {
        run(scriptRemove, path, null);
    }

    @Override
    public Read read(String path) {
        Process p = sandbox.start(List.of("/bin/sh", "-c", scriptRead, "sh", "-", path), false);
        CompletableFuture<byte[]> stderr = drainAsync(p.getErrorStream());
        return new Read() {
            @Override
            public InputStream data() {
                return p.getInputStream();
            }

            @Override
            public void finish() {
                check(p, stderr, path);
            }

            @Override
            public void close() {
                p.destroyForcibly();
            }
        };
    }

    /**
     * {@inheritDoc} The bytes go to a hidden temp file beside {@code path}
     * ({@code .<name>.agentbox-<random>}), moved over {@code path} by {@link Write#finish()} with
     * the old file's mode and owner, so an abandoned write leaves the old file whole. A symlink, or a
     * directory where the user may not create a file, is written in place as before.
     */
    @Override
    public Write write(String path) {
        String temp = tempBeside(path);
        Process p = sandbox.start(List.of("/bin/sh", "-c", scriptWrite, "sh", format, path, temp), true);
        CompletableFuture<byte[]> stdout = drainAsync(p.getInputStream());
        CompletableFuture<byte[]> stderr = drainAsync(p.getErrorStream());
        return new Write() {
            private volatile boolean done;

            @Override
            public OutputStream data() {
                return p.getOutputStream();
            }

            @Override
            public EntryInfo finish() {
                try {
                    p.getOutputStream().close();
                } catch (IOException ignored) {
                    // the exit code tells what happened
                }
                check(p, stderr, path);
                byte[] out = stdout.join();
                Result written = out.length > 0 && out[0] == 'T' ? run(scriptCommit, path, temp)
                        : new Result(Arrays.copyOfRange(out, Math.min(1, out.length), out.length));
                done = true;
                return single(written, path);
            }

            @Override
            public void close() {
                p.destroyForcibly();
                if (done) {
                    return;
                }
                try {
                    p.waitFor(OP_TIMEOUT_MS, TimeUnit.MILLISECONDS); // the writer first, so nothing recreates the temp
                    run(SCRIPT_DISCARD, temp, null);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (RuntimeException gone) {
                    // the sandbox ended: its files went with it
                }
            }
        };
    }

    /** A fresh hidden name in {@code path}'s directory (an absolute sandbox path); see {@link #isWriteTemp}. */
    static String tempBeside(String path) {
        int slash = path.lastIndexOf('/');
        String dir = slash <= 0 ? "" : path.substring(0, slash);
        String name = path.substring(slash + 1);
        return dir + "/." + name + TEMP_MARK + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);
    }

    /**
     * Whether the last segment of {@code path} is a name {@link #write} gives its temp files, so a
     * directory watch can leave them out (envd's in-place writes make no such events).
     */
    public static boolean isWriteTemp(String path) {
        return TEMP_NAME.matcher(path.substring(path.lastIndexOf('/') + 1)).matches();
    }

    private Result run(String script, String arg, String arg2) {
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", script, "sh", format, arg));
        if (arg2 != null) {
            argv.add(arg2);
        }
        Process p = sandbox.start(argv, false);
        CompletableFuture<byte[]> stderr = drainAsync(p.getErrorStream());
        byte[] out;
        try (InputStream in = p.getInputStream()) {
            out = in.readNBytes(MAX_LIST_BYTES + 1);
        } catch (IOException e) {
            p.destroyForcibly();
            throw Status.UNAVAILABLE.withDescription("file operation failed: " + e.getMessage()).asRuntimeException();
        }
        if (out.length > MAX_LIST_BYTES) {
            p.destroyForcibly();
            throw ErrorReason.LIMIT_REACHED.exception(Status.Code.RESOURCE_EXHAUSTED, "listing of '" + arg + "' exceeds "
                    + MAX_LIST_BYTES + " bytes; use a smaller depth");
        }
        check(p, stderr, arg);
        return new Result(out);
    }

    private void check(Process p, CompletableFuture<byte[]> stderr, String path) {
        int code;
        try {
            if (!p.waitFor(OP_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw Status.DEADLINE_EXCEEDED.withDescription("file operation on '" + path + "' timed out")
                        .asRuntimeException();
            }
            code = p.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw Status.CANCELLED.withDescription("interrupted").asRuntimeException();
        }
        if (code != 0) {
            String err = new String(stderr.join(), StandardCharsets.UTF_8).strip();
            throw failure(code, err, path);
        }
    }

    private StatusRuntimeException failure(int code, String err, String path) {
        if (!sandbox.isAlive()) {
            return sandbox.unavailable();
        }
        if (code == 20) {
            return ErrorReason.PATH_NOT_FOUND.exception(Status.Code.NOT_FOUND, "path '" + path + "' does not exist");
        }
        if (code != 21 && code != 22 && code != 23 && code != 24) {
            return fromMessage(err, path);
        }
        Status s = switch (code) {
            case 21 -> Status.FAILED_PRECONDITION.withDescription("path '" + path + "' is a directory");
            case 22 -> Status.FAILED_PRECONDITION.withDescription("path '" + path + "' is not a directory");
            case 23 -> Status.ALREADY_EXISTS.withDescription("path '" + path + "' already exists");
            case 24 -> Status.FAILED_PRECONDITION.withDescription("path '" + path + "' is a FIFO or a socket, not a regular file");
            default -> throw new IllegalStateException("unreachable");
        };
        return s.asRuntimeException();
    }

    /** Known failures of the coreutils we run, as a status and a message without shell noise. */
    private static final List<FileError> FILE_ERRORS = List.of(
            new FileError("Read-only file system", Status.Code.PERMISSION_DENIED, "read-only file system"),
            new FileError("Permission denied", Status.Code.PERMISSION_DENIED, "permission denied"),
            new FileError("Operation not permitted", Status.Code.PERMISSION_DENIED, "operation not permitted"),
            new FileError("File name too long", Status.Code.INVALID_ARGUMENT, "file name too long"),
            new FileError("dangerous to operate recursively", Status.Code.INVALID_ARGUMENT, "refusing to remove '/'"),
            new FileError("No such file", Status.Code.NOT_FOUND, "no such file or directory", ErrorReason.PATH_NOT_FOUND),
            new FileError("Not a directory", Status.Code.FAILED_PRECONDITION, "a parent is not a directory"),
            new FileError("Is a directory", Status.Code.FAILED_PRECONDITION, "is a directory"),
            // mv -T of a file onto a directory ("mv: '/' is a directory"; found by InputFuzzTest)
            new FileError("' is a directory", Status.Code.FAILED_PRECONDITION, "the destination is a directory"),
            new FileError("Directory not empty", Status.Code.FAILED_PRECONDITION, "directory not empty"),
            new FileError("File exists", Status.Code.FAILED_PRECONDITION, "file exists"),
            new FileError("cannot overwrite", Status.Code.FAILED_PRECONDITION, "cannot overwrite the destination"),
            new FileError("cannot move", Status.Code.FAILED_PRECONDITION, "cannot move there"),
            new FileError("Device or resource busy", Status.Code.FAILED_PRECONDITION,
                    "in use: a mount point (such as /home/user or /tmp) cannot be removed or replaced"),
            new FileError("nonexistent directory", Status.Code.FAILED_PRECONDITION,
                    "a parent directory does not exist (or is a dangling symlink)"),
            // busybox mv of a directory into itself (EINVAL)
            new FileError("Invalid argument", Status.Code.INVALID_ARGUMENT,
                    "invalid move: a directory cannot be moved into itself"),
            new FileError("No space left", Status.Code.RESOURCE_EXHAUSTED, "no space left on device", ErrorReason.NO_SPACE),
            new FileError("quota", Status.Code.RESOURCE_EXHAUSTED, "disk quota exceeded", ErrorReason.NO_SPACE));

    private record FileError(String marker, Status.Code code, String message, ErrorReason reason) {
        FileError(String marker, Status.Code code, String message) {
            this(marker, code, message, null);
        }
    }

    private static StatusRuntimeException fromMessage(String err, String path) {
        for (FileError e : FILE_ERRORS) {
            if (err.contains(e.marker())) {
                String message = "'" + path + "': " + e.message();
                return e.reason() != null ? e.reason().exception(e.code(), message)
                        : Status.fromCode(e.code()).withDescription(message).asRuntimeException();
            }
        }
        // unknown: keep the tool's own words, minus the shell's "sh: 1: " prefix
        String last = err.lines().reduce((a, b) -> b).orElse("").replaceFirst("^sh: \\d+: ", "");
        return Status.INTERNAL.withDescription("file operation on '" + path + "' failed" + (last.isEmpty() ? "" : ": " + last))
                .asRuntimeException();
    }

    private static CompletableFuture<byte[]> drainAsync(InputStream in) {
        return CompletableFuture.supplyAsync(() -> {
            try (in) {
                byte[] head = in.readNBytes(8192);
                in.transferTo(OutputStream.nullOutputStream());
                return head;
            } catch (IOException e) {
                return new byte[0];
            }
        }, IoThreads.POOL);
    }

    private EntryInfo single(Result r, String path) {
        List<EntryInfo> e = parse(r.stdout, tools);
        if (e.isEmpty()) {
            throw ErrorReason.PATH_NOT_FOUND.exception(Status.Code.NOT_FOUND, "path '" + path + "' does not exist");
        }
        return e.get(0);
    }

    /** Parses the records of {@link #FORMAT} or {@link #RECORD}. */
    static List<EntryInfo> parse(byte[] out, Tools tools) {
        return tools == Tools.GNU ? parse(out) : parseRecords(out);
    }

    /** Parses {@link #RECORD} output: "type/size/mode/perms/user/group/mtime\\n" target NUL path NUL. */
    static List<EntryInfo> parseRecords(byte[] out) {
        List<EntryInfo> entries = new ArrayList<>();
        int i = 0;
        while (i < out.length) {
            int nl = indexOf(out, (byte) '\n', i);
            int nul1 = nl < 0 ? -1 : indexOf(out, (byte) 0, nl + 1);
            int nul2 = nul1 < 0 ? -1 : indexOf(out, (byte) 0, nul1 + 1);
            if (nul2 < 0) {
                break;
            }
            String[] f = new String(out, i, nl - i, StandardCharsets.UTF_8).split("/", -1);
            String target = new String(out, nl + 1, nul1 - nl - 1, StandardCharsets.UTF_8);
            String path = new String(out, nul1 + 1, nul2 - nul1 - 1, StandardCharsets.UTF_8);
            i = nul2 + 1;
            if (f.length != 7) {
                continue;
            }
            String type = f[0].startsWith("regular") ? "f" : f[0].equals("directory") ? "d"
                    : f[0].equals("symbolic link") ? "l" : "?";
            entries.add(entry(List.of(type, f[1], f[2], f[3], f[4], f[5], f[6], target, path)));
        }
        return entries;
    }

    private static int indexOf(byte[] b, byte v, int from) {
        for (int i = from; i < b.length; i++) {
            if (b[i] == v) {
                return i;
            }
        }
        return -1;
    }

    /** Parses find's NUL-separated records. */
    static List<EntryInfo> parse(byte[] out) {
        List<String> fields = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < out.length; i++) {
            if (out[i] == 0) {
                fields.add(new String(out, start, i - start, StandardCharsets.UTF_8));
                start = i + 1;
            }
        }
        List<EntryInfo> entries = new ArrayList<>(fields.size() / FIELDS);
        for (int i = 0; i + FIELDS <= fields.size(); i += FIELDS) {
            entries.add(entry(fields.subList(i, i + FIELDS)));
        }
        return entries;
    }

    private static EntryInfo entry(List<String> f) {
        String path = f.get(8);
        String trimmed = path.length() > 1 && path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        int slash = trimmed.lastIndexOf('/');
        String name = slash >= 0 && trimmed.length() > 1 ? trimmed.substring(slash + 1) : trimmed;
        FileType type = switch (f.get(0)) {
            case "f" -> FileType.FILE_TYPE_FILE;
            case "d" -> FileType.FILE_TYPE_DIRECTORY;
            case "l" -> FileType.FILE_TYPE_SYMLINK;
            default -> FileType.FILE_TYPE_UNSPECIFIED;
        };
        EntryInfo.Builder b = EntryInfo.newBuilder()
                .setName(name)
                .setType(type)
                .setPath(trimmed)
                .setSize(parseLong(f.get(1)))
                .setMode((int) Long.parseLong(f.get(2).isEmpty() ? "0" : f.get(2), 8))
                .setPermissions(f.get(3))
                .setOwner(f.get(4))
                .setGroup(f.get(5))
                .setModifiedTimeMs(Math.round(parseDouble(f.get(6)) * 1000));
        if (!f.get(7).isEmpty()) {
            b.setSymlinkTarget(f.get(7));
        }
        return b.build();
    }

    private static long parseLong(String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static double parseDouble(String s) {
        try {
            return Double.parseDouble(s);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private record Result(byte[] stdout) {}
}
