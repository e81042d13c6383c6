package io.agentbox.manager.envd;

import com.google.protobuf.ByteString;
import com.google.protobuf.Timestamp;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.InputText;
import io.agentbox.protocol.envd.EnvdFilesystem;
import io.agentbox.protocol.envd.EnvdProcess;
import io.agentbox.protocol.v1.EntryInfo;
import io.agentbox.protocol.v1.ExecEvent;
import io.agentbox.protocol.v1.FileType;
import io.agentbox.protocol.v1.FsEvent;
import io.agentbox.protocol.v1.ProcessConfig;
import io.agentbox.protocol.v1.ProcessExited;
import io.agentbox.protocol.v1.ProcessInfo;
import io.agentbox.protocol.v1.ProcessRef;
import io.agentbox.protocol.v1.PtySize;
import io.agentbox.protocol.v1.Signal;
import io.agentbox.protocol.v1.WatchDirEvent;

/**
 * What is not a plain copy between envd's messages ({@link EnvdProcess}, {@link EnvdFilesystem};
 * their JSON is {@link EnvdCodec}'s) and the worker's {@code agentbox.v1} messages: Go's file mode
 * type bits, {@code ls}-style permissions, timestamps, enum translations, and the checks envd
 * makes on requests (a command, PTY sizes, env names, a process selector, the two signals).
 * Bad input throws {@link ApiException} with Connect code {@code invalid_argument}.
 */
public final class EnvdJson {
    /** Go {@code os.ModeDir} and {@code os.ModeSymlink}: envd's {@code EntryInfo.mode} carries Go type bits. */
    static final long GO_MODE_DIR = 1L << 31;
    static final long GO_MODE_SYMLINK = 1L << 27;
    /** Largest PTY dimension in character cells (the kernel's {@code winsize} holds 16 bits). */
    static final int MAX_PTY_CELLS = 65_535;

    private EnvdJson() {}

    // ---- requests ------------------------------------------------------------------------------

    /**
     * {@code process.PTY} → worker {@code PtySize}; each dimension 1..65535 character cells.
     */
    static PtySize ptySize(EnvdProcess.PTY pty) {
        int cols = pty.getSize().getCols();
        int rows = pty.getSize().getRows();
        // cols first: a fixed order of checks gives the same message every time (Map.of's order varies per JVM)
        if (Integer.toUnsignedLong(cols) > MAX_PTY_CELLS) {
            throw bad("field 'cols' out of range");
        }
        if (Integer.toUnsignedLong(rows) > MAX_PTY_CELLS) {
            throw bad("field 'rows' out of range");
        }
        if (cols == 0 || rows == 0) {
            throw bad("pty.size needs cols and rows of at least 1");
        }
        return PtySize.newBuilder().setCols(cols).setRows(rows).build();
    }

    /** {@code process.ProcessConfig} → worker {@code ProcessConfig}: a command is required, env names hold no {@code =}. */
    static ProcessConfig processConfig(EnvdProcess.ProcessConfig c) {
        if (c.getCmd().isEmpty()) {
            throw bad("process.cmd is required");
        }
        for (String name : c.getEnvsMap().keySet()) {
            if (name.isEmpty() || name.indexOf('=') >= 0) {
                throw bad("field 'envs' key '" + InputText.quote(name) + "' must be non-empty and hold no '='");
            }
        }
        return ProcessConfig.newBuilder().setCmd(c.getCmd()).addAllArgs(c.getArgsList()).putAllEnvs(c.getEnvsMap())
                .setCwd(c.getCwd()).build();
    }

    /** {@code process.ProcessSelector} ({@code {"pid":N}} or {@code {"tag":"…"}}) → {@code ProcessRef}. */
    static ProcessRef processRef(String sandboxId, EnvdProcess.ProcessSelector selector) {
        ProcessRef.Builder b = ProcessRef.newBuilder().setSandboxId(sandboxId);
        return switch (selector.getSelectorCase()) {
            case PID -> b.setPid(selector.getPid()).build();
            case TAG -> b.setTag(selector.getTag()).build();
            default -> throw bad("process selector needs 'pid' or 'tag'");
        };
    }

    /** {@code process.Signal} → worker {@code Signal}: SIGKILL (9) or SIGTERM (15), nothing else. */
    static Signal signal(EnvdProcess.SendSignalRequest request) {
        return switch (request.getSignalValue()) {
            case EnvdProcess.Signal.SIGNAL_SIGKILL_VALUE -> Signal.SIGNAL_SIGKILL;
            case EnvdProcess.Signal.SIGNAL_SIGTERM_VALUE -> Signal.SIGNAL_SIGTERM;
            case EnvdProcess.Signal.SIGNAL_UNSPECIFIED_VALUE -> throw bad("field 'signal' is required");
            default -> throw bad("unsupported signal " + request.getSignalValue()
                    + " (use SIGNAL_SIGKILL or SIGNAL_SIGTERM)");
        };
    }

    // ---- responses -----------------------------------------------------------------------------

    /**
     * A worker {@code ExecEvent} as the {@code event} of a {@code StartResponse}/{@code ConnectResponse}:
     * {@code start{pid}}, {@code data{stdout|stderr|pty}}, {@code end{…}} or {@code keepalive{}};
     * null for an empty event.
     */
    static EnvdProcess.ProcessEvent processEvent(ExecEvent ev) {
        EnvdProcess.ProcessEvent.Builder event = EnvdProcess.ProcessEvent.newBuilder();
        switch (ev.getEventCase()) {
            case STARTED -> event.getStartBuilder().setPid(ev.getStarted().getPid());
            case STDOUT -> event.getDataBuilder().setStdout(ev.getStdout());
            case STDERR -> event.getDataBuilder().setStderr(ev.getStderr());
            case PTY -> event.getDataBuilder().setPty(ev.getPty());
            case EXITED -> event.setEnd(endEvent(ev.getExited()));
            case KEEPALIVE -> event.setKeepalive(EnvdProcess.ProcessEvent.KeepAlive.getDefaultInstance());
            default -> {
                return null;
            }
        }
        return event.build();
    }

    /** {@code ProcessEvent.EndEvent}: exitCode, exited and status always, error only when the exit was not clean. */
    static EnvdProcess.ProcessEvent.EndEvent endEvent(ProcessExited e) {
        EnvdProcess.ProcessEvent.EndEvent.Builder end = EnvdProcess.ProcessEvent.EndEvent.newBuilder()
                .setExitCode(e.getExitCode()).setExited(e.getExited()).setStatus(e.getStatus());
        if (!e.getError().isEmpty()) {
            end.setError(e.getError());
        }
        return end.build();
    }

    /** The {@code keepalive{}} event of a process stream. */
    static EnvdProcess.ProcessEvent keepalive() {
        return EnvdProcess.ProcessEvent.newBuilder()
                .setKeepalive(EnvdProcess.ProcessEvent.KeepAlive.getDefaultInstance()).build();
    }

    /**
     * Worker {@code WatchDirEvent} → {@code filesystem.WatchDirResponse}: {@code {"start":{}}} or
     * {@code {"filesystem":{"name":"sub/f","type":"EVENT_TYPE_CREATE"}}}; null for anything else.
     */
    static EnvdFilesystem.WatchDirResponse watchEvent(WatchDirEvent ev) {
        return switch (ev.getEventCase()) {
            case STARTED -> EnvdFilesystem.WatchDirResponse.newBuilder()
                    .setStart(EnvdFilesystem.WatchDirResponse.StartEvent.getDefaultInstance()).build();
            case FS -> {
                EnvdFilesystem.FilesystemEvent fs = filesystemEvent(ev.getFs());
                yield fs == null ? null : EnvdFilesystem.WatchDirResponse.newBuilder().setFilesystem(fs).build();
            }
            default -> null;
        };
    }

    /** Worker {@code FsEvent} → {@code filesystem.FilesystemEvent} {@code {name, type}}; null for an unknown type. */
    static EnvdFilesystem.FilesystemEvent filesystemEvent(FsEvent fs) {
        EnvdFilesystem.EventType type = switch (fs.getType()) {
            case FS_EVENT_TYPE_CREATE -> EnvdFilesystem.EventType.EVENT_TYPE_CREATE;
            case FS_EVENT_TYPE_WRITE -> EnvdFilesystem.EventType.EVENT_TYPE_WRITE;
            case FS_EVENT_TYPE_REMOVE -> EnvdFilesystem.EventType.EVENT_TYPE_REMOVE;
            case FS_EVENT_TYPE_RENAME -> EnvdFilesystem.EventType.EVENT_TYPE_RENAME;
            case FS_EVENT_TYPE_CHMOD -> EnvdFilesystem.EventType.EVENT_TYPE_CHMOD;
            default -> null;
        };
        return type == null ? null : EnvdFilesystem.FilesystemEvent.newBuilder().setName(fs.getName()).setType(type).build();
    }

    /** {@code filesystem.WatchDirResponse} keepalive: {@code {"keepalive":{}}}. */
    static EnvdFilesystem.WatchDirResponse watchKeepalive() {
        return EnvdFilesystem.WatchDirResponse.newBuilder()
                .setKeepalive(EnvdFilesystem.WatchDirResponse.KeepAlive.getDefaultInstance()).build();
    }

    /** {@code process.ProcessInfo}: {@code {"config":{cmd,args,envs,cwd?},"pid":N,"tag"?}}. */
    static EnvdProcess.ProcessInfo processInfo(ProcessInfo p) {
        EnvdProcess.ProcessConfig.Builder config = EnvdProcess.ProcessConfig.newBuilder()
                .setCmd(p.getConfig().getCmd()).addAllArgs(p.getConfig().getArgsList()).putAllEnvs(p.getConfig().getEnvsMap());
        if (!p.getConfig().getCwd().isEmpty()) {
            config.setCwd(p.getConfig().getCwd());
        }
        EnvdProcess.ProcessInfo.Builder out = EnvdProcess.ProcessInfo.newBuilder().setConfig(config).setPid(p.getPid());
        if (!p.getTag().isEmpty()) {
            out.setTag(p.getTag());
        }
        return out.build();
    }

    /**
     * {@code filesystem.EntryInfo} (docs/e2b-wire.md#filesystem-service): the permission bits with
     * Go's type bits added, {@code ls} permissions when the worker sent none, the modification time
     * as a Timestamp, the symlink target only for symlinks.
     */
    static EnvdFilesystem.EntryInfo entryInfo(EntryInfo e) {
        long mode = Integer.toUnsignedLong(e.getMode()) & 0777L;
        if (e.getType() == FileType.FILE_TYPE_DIRECTORY) {
            mode |= GO_MODE_DIR;
        } else if (e.getType() == FileType.FILE_TYPE_SYMLINK) {
            mode |= GO_MODE_SYMLINK;
        }
        long ms = e.getModifiedTimeMs();
        EnvdFilesystem.EntryInfo.Builder out = EnvdFilesystem.EntryInfo.newBuilder()
                .setName(e.getName())
                .setTypeValue(fileType(e.getType()).getNumber())
                .setPath(e.getPath())
                .setSize(e.getSize())
                .setMode((int) mode)
                .setPermissions(e.getPermissions().isEmpty() ? permissions(e.getType(), mode) : e.getPermissions())
                .setOwner(e.getOwner())
                .setGroup(e.getGroup())
                .setModifiedTime(Timestamp.newBuilder().setSeconds(Math.floorDiv(ms, 1000))
                        .setNanos((int) Math.floorMod(ms, 1000) * 1_000_000));
        if (!e.getSymlinkTarget().isEmpty()) {
            out.setSymlinkTarget(e.getSymlinkTarget());
        }
        return out.build();
    }

    /** The envd file type of a worker one; an unknown type is {@code FILE_TYPE_UNSPECIFIED} (the SDK skips it). */
    static EnvdFilesystem.FileType fileType(FileType t) {
        return switch (t) {
            case FILE_TYPE_FILE -> EnvdFilesystem.FileType.FILE_TYPE_FILE;
            case FILE_TYPE_DIRECTORY -> EnvdFilesystem.FileType.FILE_TYPE_DIRECTORY;
            case FILE_TYPE_SYMLINK -> EnvdFilesystem.FileType.FILE_TYPE_SYMLINK;
            default -> EnvdFilesystem.FileType.FILE_TYPE_UNSPECIFIED;
        };
    }

    /** {@code ls -l}'s form: {@code d}, {@code L} (as Go prints a symlink) or {@code -}, then rwx triplets. */
    private static String permissions(FileType type, long mode) {
        StringBuilder sb = new StringBuilder(type == FileType.FILE_TYPE_DIRECTORY ? "d"
                : type == FileType.FILE_TYPE_SYMLINK ? "L" : "-");
        String rwx = "rwxrwxrwx";
        for (int i = 0; i < 9; i++) {
            sb.append((mode & (1L << (8 - i))) != 0 ? rwx.charAt(i) : '-');
        }
        return sb.toString();
    }

    /** Input bytes of {@code SendInput}: the terminal's when given, else stdin's (a pty process reads both from one pipe). */
    static ByteString input(EnvdProcess.ProcessInput input) {
        return input.getInputCase() == EnvdProcess.ProcessInput.InputCase.PTY ? input.getPty() : input.getStdin();
    }

    static ApiException bad(String message) {
        return EnvdCodec.bad(message);
    }
}
