package io.agentbox.manager.envd;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.api.ApiException;
import io.agentbox.manager.api.InputText;
import io.agentbox.manager.api.Json;
import io.agentbox.protocol.v1.EntryInfo;
import io.agentbox.protocol.v1.ExecEvent;
import io.agentbox.protocol.v1.FileType;
import io.agentbox.protocol.v1.ProcessConfig;
import io.agentbox.protocol.v1.ProcessExited;
import io.agentbox.protocol.v1.ProcessInfo;
import io.agentbox.protocol.v1.ProcessRef;
import io.agentbox.protocol.v1.PtySize;
import io.agentbox.protocol.v1.WatchDirEvent;
import io.agentbox.protocol.v1.Signal;
import java.time.Instant;
import java.util.Base64;
import java.util.Iterator;
import java.util.Map;

/**
 * Proto3-JSON mapping between envd messages ({@code process.*}, {@code filesystem.*};
 * docs/e2b-wire.md#proto3-json) and the worker's {@code agentbox.v1} messages.
 *
 * <p>Reading: lowerCamelCase and snake_case names, numbers as JSON numbers or strings, enums by
 * name or number, bytes as standard or URL-safe base64. Writing: lowerCamelCase, int64 as
 * string, enums by name, standard base64, Timestamps as RFC 3339; default values omitted.
 * Strings follow {@link InputText}'s value rule; env names hold no {@code =}. Bad input throws
 * {@link ApiException} with Connect code {@code invalid_argument}.
 */
public final class EnvdJson {
    /** Go {@code os.ModeDir} and {@code os.ModeSymlink}: envd's {@code EntryInfo.mode} carries Go type bits. */
    static final long GO_MODE_DIR = 1L << 31;
    static final long GO_MODE_SYMLINK = 1L << 27;

    private EnvdJson() {}

    // ---- reading -------------------------------------------------------------------------------

    /** The field named {@code camel} (or its snake_case form), or a missing node. */
    static JsonNode field(JsonNode obj, String camel) {
        JsonNode v = obj.get(camel);
        if (v == null || v.isNull()) {
            v = obj.get(snake(camel));
        }
        return v == null || v.isNull() ? com.fasterxml.jackson.databind.node.MissingNode.getInstance() : v;
    }

    static String string(JsonNode obj, String name) {
        JsonNode v = field(obj, name);
        if (v.isMissingNode()) {
            return "";
        }
        if (!v.isTextual()) {
            throw bad("field '" + name + "' must be a string");
        }
        return checked("field '" + name + "'", v.textValue());
    }

    /** {@code s} when it follows {@link InputText}'s value rule (no NUL, no unpaired surrogate). */
    private static String checked(String what, String s) {
        String problem = InputText.problem(s, true);
        if (problem != null) {
            throw bad(what + " " + problem + "; NUL and unpaired surrogates are not allowed");
        }
        return s;
    }

    static long unsigned(JsonNode obj, String name, long max) {
        JsonNode v = field(obj, name);
        long value;
        if (v.isMissingNode()) {
            return 0;
        } else if (v.isIntegralNumber()) {
            value = v.longValue();
        } else if (v.isTextual()) {
            try {
                value = Long.parseLong(v.textValue());
            } catch (NumberFormatException e) {
                throw bad("field '" + name + "' must be an integer");
            }
        } else {
            throw bad("field '" + name + "' must be an integer");
        }
        if (value < 0 || value > max) {
            throw bad("field '" + name + "' out of range");
        }
        return value;
    }

    static byte[] bytes(JsonNode obj, String name) {
        String s = string(obj, name);
        try {
            return s.indexOf('-') >= 0 || s.indexOf('_') >= 0
                    ? Base64.getUrlDecoder().decode(s) : Base64.getDecoder().decode(s);
        } catch (IllegalArgumentException e) {
            throw bad("field '" + name + "' is not base64");
        }
    }

    static ObjectNode object(JsonNode obj, String name) {
        JsonNode v = field(obj, name);
        if (v.isMissingNode()) {
            return Json.MAPPER.createObjectNode();
        }
        if (!v.isObject()) {
            throw bad("field '" + name + "' must be an object");
        }
        return (ObjectNode) v;
    }

    /**
     * {@code process.PTY} ({@code {"size":{"cols":80,"rows":24}}}) → worker {@code PtySize};
     * each dimension 1..65535 character cells.
     */
    static PtySize ptySize(JsonNode pty) {
        JsonNode size = object(pty, "size");
        long cols = unsigned(size, "cols", 65_535);
        long rows = unsigned(size, "rows", 65_535);
        if (cols == 0 || rows == 0) {
            throw bad("pty.size needs cols and rows of at least 1");
        }
        return PtySize.newBuilder().setCols((int) cols).setRows((int) rows).build();
    }

    /** {@code process.ProcessConfig} → worker {@code ProcessConfig}. */
    static ProcessConfig processConfig(JsonNode json) {
        ProcessConfig.Builder b = ProcessConfig.newBuilder().setCmd(string(json, "cmd")).setCwd(string(json, "cwd"));
        JsonNode args = field(json, "args");
        if (!args.isMissingNode()) {
            if (!args.isArray()) {
                throw bad("field 'args' must be an array");
            }
            for (JsonNode a : args) {
                if (!a.isTextual()) {
                    throw bad("field 'args' must hold strings");
                }
                b.addArgs(checked("field 'args[" + b.getArgsCount() + "]'", a.textValue()));
            }
        }
        b.putAllEnvs(stringMap(json, "envs"));
        if (b.getCmd().isEmpty()) {
            throw bad("process.cmd is required");
        }
        return b.build();
    }

    /** An object of strings used as environment variables ({@code process.ProcessConfig.envs}). */
    static Map<String, String> stringMap(JsonNode obj, String name) {
        ObjectNode map = object(obj, name);
        java.util.LinkedHashMap<String, String> out = new java.util.LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = map.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String key = InputText.quote(e.getKey());
            if (!e.getValue().isTextual()) {
                throw bad("field '" + name + "." + key + "' must be a string");
            }
            if (e.getKey().isEmpty() || e.getKey().indexOf('=') >= 0) {
                throw bad("field '" + name + "' key '" + key + "' must be non-empty and hold no '='");
            }
            checked("field '" + name + "' key '" + key + "'", e.getKey());
            out.put(e.getKey(), checked("field '" + name + "." + key + "'", e.getValue().textValue()));
        }
        return out;
    }

    /** {@code process.ProcessSelector} ({@code {"pid":N}} or {@code {"tag":"…"}}) → {@code ProcessRef}. */
    static ProcessRef processRef(String sandboxId, JsonNode request) {
        ObjectNode selector = object(request, "process");
        ProcessRef.Builder b = ProcessRef.newBuilder().setSandboxId(sandboxId);
        if (!field(selector, "pid").isMissingNode()) {
            return b.setPid((int) unsigned(selector, "pid", 0xffffffffL)).build();
        }
        if (!field(selector, "tag").isMissingNode()) {
            return b.setTag(string(selector, "tag")).build();
        }
        throw bad("process selector needs 'pid' or 'tag'");
    }

    /** {@code process.Signal} by name ({@code SIGNAL_SIGKILL}) or number. */
    static Signal signal(JsonNode request) {
        JsonNode v = field(request, "signal");
        if (v.isTextual()) {
            switch (v.textValue()) {
                case "SIGNAL_SIGKILL": return Signal.SIGNAL_SIGKILL;
                case "SIGNAL_SIGTERM": return Signal.SIGNAL_SIGTERM;
                default:
                    try {
                        return signalNumber(Integer.parseInt(v.textValue()));
                    } catch (NumberFormatException e) {
                        throw bad("unknown signal '" + v.textValue() + "'");
                    }
            }
        }
        if (v.isIntegralNumber()) {
            return signalNumber(v.intValue());
        }
        throw bad("field 'signal' is required");
    }

    private static Signal signalNumber(int n) {
        if (n == 9) {
            return Signal.SIGNAL_SIGKILL;
        }
        if (n == 15) {
            return Signal.SIGNAL_SIGTERM;
        }
        throw bad("unsupported signal " + n + " (use SIGNAL_SIGKILL or SIGNAL_SIGTERM)");
    }

    // ---- writing -------------------------------------------------------------------------------

    /**
     * A worker {@code ExecEvent} as a {@code StartResponse}/{@code ConnectResponse}:
     * {@code {"event":{"start":{"pid":N}}}}, {@code {"event":{"data":{"stdout":"<b64>"}}}},
     * {@code {"event":{"end":{…}}}} or {@code {"event":{"keepalive":{}}}}; null for an empty event.
     */
    static ObjectNode processEvent(ExecEvent ev) {
        ObjectNode event = Json.MAPPER.createObjectNode();
        switch (ev.getEventCase()) {
            case STARTED:
                event.putObject("start").put("pid", Integer.toUnsignedLong(ev.getStarted().getPid()));
                break;
            case STDOUT:
                event.putObject("data").put("stdout", Base64.getEncoder().encodeToString(ev.getStdout().toByteArray()));
                break;
            case STDERR:
                event.putObject("data").put("stderr", Base64.getEncoder().encodeToString(ev.getStderr().toByteArray()));
                break;
            case PTY:
                event.putObject("data").put("pty", Base64.getEncoder().encodeToString(ev.getPty().toByteArray()));
                break;
            case EXITED:
                event.set("end", endEvent(ev.getExited()));
                break;
            case KEEPALIVE:
                event.putObject("keepalive");
                break;
            default:
                return null;
        }
        ObjectNode out = Json.MAPPER.createObjectNode();
        out.set("event", event);
        return out;
    }

    /**
     * Worker {@code WatchDirEvent} → {@code filesystem.WatchDirResponse}: {@code {"start":{}}} or
     * {@code {"filesystem":{"name":"sub/f","type":"EVENT_TYPE_CREATE"}}}; null for anything else.
     */
    static ObjectNode watchEvent(WatchDirEvent ev) {
        ObjectNode out = Json.MAPPER.createObjectNode();
        switch (ev.getEventCase()) {
            case STARTED -> out.putObject("start");
            case FS -> {
                String type = switch (ev.getFs().getType()) {
                    case FS_EVENT_TYPE_CREATE -> "EVENT_TYPE_CREATE";
                    case FS_EVENT_TYPE_WRITE -> "EVENT_TYPE_WRITE";
                    case FS_EVENT_TYPE_REMOVE -> "EVENT_TYPE_REMOVE";
                    case FS_EVENT_TYPE_RENAME -> "EVENT_TYPE_RENAME";
                    case FS_EVENT_TYPE_CHMOD -> "EVENT_TYPE_CHMOD";
                    default -> null;
                };
                if (type == null) {
                    return null;
                }
                out.putObject("filesystem").put("name", ev.getFs().getName()).put("type", type);
            }
            default -> {
                return null;
            }
        }
        return out;
    }

    /** {@code filesystem.WatchDirResponse} keepalive: {@code {"keepalive":{}}}. */
    static ObjectNode watchKeepalive() {
        ObjectNode out = Json.MAPPER.createObjectNode();
        out.putObject("keepalive");
        return out;
    }

    static ObjectNode keepalive() {
        ObjectNode out = Json.MAPPER.createObjectNode();
        out.putObject("event").putObject("keepalive");
        return out;
    }

    static ObjectNode endEvent(ProcessExited e) {
        ObjectNode end = Json.MAPPER.createObjectNode();
        end.put("exitCode", e.getExitCode());
        end.put("exited", e.getExited());
        end.put("status", e.getStatus());
        if (!e.getError().isEmpty()) {
            end.put("error", e.getError());
        }
        return end;
    }

    /** {@code process.ProcessInfo}: {@code {"config":{cmd,args,envs,cwd},"pid":N,"tag"?}}. */
    static ObjectNode processInfo(ProcessInfo p) {
        ObjectNode out = Json.MAPPER.createObjectNode();
        ObjectNode config = out.putObject("config");
        config.put("cmd", p.getConfig().getCmd());
        ArrayNode args = config.putArray("args");
        p.getConfig().getArgsList().forEach(args::add);
        ObjectNode envs = config.putObject("envs");
        p.getConfig().getEnvsMap().forEach(envs::put);
        if (!p.getConfig().getCwd().isEmpty()) {
            config.put("cwd", p.getConfig().getCwd());
        }
        out.put("pid", Integer.toUnsignedLong(p.getPid()));
        if (!p.getTag().isEmpty()) {
            out.put("tag", p.getTag());
        }
        return out;
    }

    /** {@code filesystem.EntryInfo} (docs/e2b-wire.md#filesystem-service): size as string, type by name, Go mode bits, RFC 3339 time. */
    static ObjectNode entryInfo(EntryInfo e) {
        ObjectNode out = Json.MAPPER.createObjectNode();
        out.put("name", e.getName());
        out.put("type", fileType(e.getType()));
        out.put("path", e.getPath());
        out.put("size", Long.toString(e.getSize()));
        long mode = Integer.toUnsignedLong(e.getMode()) & 0777L;
        if (e.getType() == FileType.FILE_TYPE_DIRECTORY) {
            mode |= GO_MODE_DIR;
        } else if (e.getType() == FileType.FILE_TYPE_SYMLINK) {
            mode |= GO_MODE_SYMLINK;
        }
        out.put("mode", mode);
        out.put("permissions", e.getPermissions().isEmpty() ? permissions(e.getType(), mode) : e.getPermissions());
        out.put("owner", e.getOwner());
        out.put("group", e.getGroup());
        out.put("modifiedTime", Instant.ofEpochMilli(e.getModifiedTimeMs()).toString());
        if (!e.getSymlinkTarget().isEmpty()) {
            out.put("symlinkTarget", e.getSymlinkTarget());
        }
        return out;
    }

    static String fileType(FileType t) {
        return t == FileType.UNRECOGNIZED ? FileType.FILE_TYPE_UNSPECIFIED.name() : t.name();
    }

    private static String permissions(FileType type, long mode) {
        StringBuilder sb = new StringBuilder(type == FileType.FILE_TYPE_DIRECTORY ? "d"
                : type == FileType.FILE_TYPE_SYMLINK ? "L" : "-");
        String rwx = "rwxrwxrwx";
        for (int i = 0; i < 9; i++) {
            sb.append((mode & (1L << (8 - i))) != 0 ? rwx.charAt(i) : '-');
        }
        return sb.toString();
    }

    static ApiException bad(String message) {
        return ConnectError.of(ConnectError.INVALID_ARGUMENT, message).toException();
    }

    private static String snake(String camel) {
        StringBuilder sb = new StringBuilder();
        for (char c : camel.toCharArray()) {
            if (Character.isUpperCase(c)) {
                sb.append('_').append(Character.toLowerCase(c));
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }
}
