package io.agentbox.manager.nativeapi;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.e2b.ControlCore;
import io.agentbox.manager.envd.FileDownload;
import io.agentbox.manager.envd.FileUploads;
import io.agentbox.manager.http.InputText;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.http.Limits;
import io.agentbox.manager.http.route.Reply;
import io.agentbox.manager.http.route.RouteTable;
import io.agentbox.protocol.v1.EntryInfo;
import io.agentbox.protocol.v1.FilesystemServiceGrpc;
import io.agentbox.protocol.v1.ListDirRequest;
import io.agentbox.protocol.v1.PathRequest;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.MultiPart;
import org.eclipse.jetty.http.MultiPartFormData;
import org.eclipse.jetty.io.Content;

/**
 * {@code /v1/sandboxes/{id}/files} (docs/native-api.md#files) over the worker's
 * {@code FilesystemService}. {@code path} is absolute or relative to the user's home;
 * {@code ?user=} is {@code user} (default) or {@code root}.
 *
 * <p>Read streams the file as {@code application/octet-stream}; write takes the raw body (gzip
 * {@code Content-Encoding} decoded) and makes the parents; upload takes {@code multipart/form-data}
 * parts with file names into the directory {@code path}. Bodies up to {@link Limits#uploadBody()}
 * (413 beyond). Errors: 404 missing path, 400 a directory where a file is wanted, 403 permission
 * denied, 409 exists (mkdir), 507 sandbox disk full.
 */
final class FileEndpoints implements NativeHandler.RouteFamily {
    static final long UNARY_DEADLINE_MS = 60_000;
    /** Deepest listing passed to the worker. */
    static final int MAX_DEPTH = 64;

    /** {@code POST .../files/mkdir}. */
    record MakeDir(String path) {}

    private final ControlCore core;
    private final Limits limits;
    private final Path spoolDir = FileUploads.spoolDirectory();

    FileEndpoints(ControlCore core, Limits limits) {
        this.core = core;
        this.limits = limits;
    }

    @Override
    public void routes(RouteTable.Builder<V1Endpoint> t) {
        t.add("GET", "/v1/sandboxes/{id}/files", this::read);
        t.add("PUT", "/v1/sandboxes/{id}/files", this::write);
        t.add("POST", "/v1/sandboxes/{id}/files", this::upload);
        t.add("DELETE", "/v1/sandboxes/{id}/files", c -> {
            Scope s = scope(c);
            unary(s).remove(s.path(c.requireQuery("path")));
            return Reply.noContent();
        });
        t.add("GET", "/v1/sandboxes/{id}/files/list", c -> {
            Scope s = scope(c);
            int depth = c.intQuery("depth", 1, MAX_DEPTH, 1);
            String path = c.query("path");
            ListDirRequest req = ListDirRequest.newBuilder().setSandboxId(s.target.sandboxId()).setUser(s.user)
                    .setPath(path == null ? "" : InputText.value("query parameter 'path'", path)).setDepth(depth).build();
            ObjectNode out = Json.MAPPER.createObjectNode();
            ArrayNode items = out.putArray("items");
            unary(s).listDir(req).getEntriesList().forEach(e -> items.add(entry(e)));
            return Reply.json(200, out);
        });
        t.add("GET", "/v1/sandboxes/{id}/files/stat", c -> {
            Scope s = scope(c);
            return Reply.json(200, entry(unary(s).stat(s.path(c.requireQuery("path")))));
        });
        t.add("POST", "/v1/sandboxes/{id}/files/mkdir", c -> {
            MakeDir b = c.body(MakeDir.class);
            if (b.path() == null || b.path().isEmpty()) {
                throw V1Errors.of(400, "field 'path' is required");
            }
            Scope s = scope(c);
            return Reply.json(201, entry(unary(s).makeDir(s.path(InputText.value("field 'path'", b.path())))));
        });
    }

    /** The sandbox and user a file request acts on. */
    private record Scope(ControlCore.Target target, String user) {
        PathRequest path(String path) {
            return PathRequest.newBuilder().setSandboxId(target.sandboxId()).setUser(user).setPath(path).build();
        }
    }

    private Scope scope(V1Call c) {
        String user = Commands.user(c.query("user"));
        return new Scope(core.target(SandboxEndpoints.actingFor(core, c.who(), c.param("id")), c.param("id")), user);
    }

    private static FilesystemServiceGrpc.FilesystemServiceBlockingStub unary(Scope s) {
        return FilesystemServiceGrpc.newBlockingStub(s.target.channel()).withDeadlineAfter(UNARY_DEADLINE_MS, TimeUnit.MILLISECONDS);
    }

    /** {@code GET ?path=}: the bytes, streamed chunk by chunk as the worker reads them. */
    private Reply read(V1Call c) throws IOException {
        Scope s = scope(c);
        PathRequest req = s.path(c.requireQuery("path"));
        String name = req.getPath().substring(req.getPath().lastIndexOf('/') + 1);
        FileDownload.stream(s.target.channel(), req, c.response(), c.callback(), response -> {
            if (!name.isEmpty() && name.matches("[\\w.+-]{1,255}")) {
                response.getHeaders().put(HttpHeader.CONTENT_DISPOSITION, "attachment; filename=\"" + name + "\"");
            }
        }, e -> V1Errors.fromWorker(e, "read file"));
        return null;
    }

    /** {@code PUT ?path=} raw body → 201 EntryInfo. */
    private Reply write(V1Call c) throws IOException {
        Scope s = scope(c);
        String path = c.requireQuery("path");
        try (InputStream in = FileUploads.decodedBody(c.request(), limits.uploadBody())) {
            return Reply.json(201, entry(FileUploads.write(s.target.channel(), s.target.sandboxId(), s.user, path, in,
                    limits.uploadBody())));
        } catch (StatusRuntimeException e) {
            throw V1Errors.fromWorker(e, "write file");
        }
    }

    /** {@code POST ?path=DIR} multipart: every part with a file name is written to {@code DIR/<name>} → 201 [EntryInfo]. */
    private Reply upload(V1Call c) throws IOException {
        String contentType = c.request().getHeaders().get(HttpHeader.CONTENT_TYPE);
        if (contentType == null || !contentType.toLowerCase().startsWith("multipart/form-data")) {
            throw V1Errors.of(415, "upload with multipart/form-data (or PUT the raw bytes to ?path=FILE)");
        }
        Scope s = scope(c);
        String dir = c.requireQuery("path");
        String base = dir.endsWith("/") ? dir : dir + "/";
        try (MultiPartFormData.Parts parts = FileUploads.parseMultipart(c.request(), contentType, limits, spoolDir)) {
            List<MultiPart.Part> files = new ArrayList<>();
            List<String> paths = new ArrayList<>();
            for (MultiPart.Part part : parts) {
                String name = part.getFileName();
                if (name == null) {
                    continue; // a plain form field
                }
                if (name.isEmpty() || name.contains("/") || name.equals(".") || name.equals("..")) {
                    throw V1Errors.of(400, "file part name '" + InputText.quote(name) + "' must be a plain file name");
                }
                files.add(part);
                paths.add(base + InputText.value("file part name", name));
            }
            if (files.isEmpty()) {
                throw V1Errors.of(400, "multipart body has no file part (a part with a filename)");
            }
            ArrayNode out = Json.MAPPER.createArrayNode();
            for (int i = 0; i < files.size(); i++) {
                try (InputStream in = Content.Source.asInputStream(files.get(i).createContentSource())) {
                    out.add(entry(FileUploads.write(s.target.channel(), s.target.sandboxId(), s.user, paths.get(i), in,
                            limits.uploadBody())));
                }
            }
            return Reply.json(201, out);
        } catch (StatusRuntimeException e) {
            throw V1Errors.fromWorker(e, "upload files");
        }
    }

    /** EntryInfo: {@code name, path, type (file|dir|symlink), size, mode, permissions, owner, group, modifiedAt, symlinkTarget?}. */
    static ObjectNode entry(EntryInfo e) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("name", e.getName());
        o.put("path", e.getPath());
        o.put("type", switch (e.getType()) {
            case FILE_TYPE_DIRECTORY -> "dir";
            case FILE_TYPE_SYMLINK -> "symlink";
            default -> "file";
        });
        o.put("size", e.getSize());
        o.put("mode", e.getMode());
        o.put("permissions", e.getPermissions());
        o.put("owner", e.getOwner());
        o.put("group", e.getGroup());
        o.put("modifiedAt", V1Json.time(e.getModifiedTimeMs()));
        if (!e.getSymlinkTarget().isEmpty()) {
            o.put("symlinkTarget", e.getSymlinkTarget());
        }
        return o;
    }
}
