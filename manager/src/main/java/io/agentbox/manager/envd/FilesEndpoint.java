package io.agentbox.manager.envd;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.HttpIo;
import io.agentbox.manager.http.InputText;
import io.agentbox.manager.http.Json;
import io.agentbox.protocol.v1.EntryInfo;
import io.agentbox.protocol.v1.PathRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.MultiPart;
import org.eclipse.jetty.http.MultiPartFormData;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;

/**
 * envd {@code GET /files} and {@code POST /files} (docs/e2b-wire.md#files-endpoint).
 *
 * <ul>
 *   <li>{@code GET /files?path=P}: raw bytes, {@code application/octet-stream}; missing → 404,
 *       directory → 400 (E2B error shape {@code {"code":<int>,"message":…}}).</li>
 *   <li>{@code POST /files?path=P} multipart: every part named {@code file} is written to its
 *       filename (the target path; the {@code path} query wins when there is exactly one part).
 *       {@code application/octet-stream} (optionally {@code Content-Encoding: gzip}): the body is
 *       written to {@code path}. Answers 200 {@code [{"name","type":"file","path"}…]}.</li>
 * </ul>
 * Callers authenticate with {@code X-Access-Token} or a URL signature (checked by the caller).
 */
final class FilesEndpoint {

    private final EnvdContext ctx;
    private final Path spoolDir;

    FilesEndpoint(EnvdContext ctx) {
        this.ctx = ctx;
        this.spoolDir = FileUploads.spoolDirectory();
    }

    void download(SandboxTarget t, Fields query, Response response, Callback callback) throws IOException {
        String path = requirePath(query);
        PathRequest req = PathRequest.newBuilder().setSandboxId(t.sandboxId()).setUser(t.user()).setPath(path).build();
        FileDownload.stream(t.channel(), req, response, callback, r -> { }, e -> restError(t, e));
    }

    void upload(SandboxTarget t, Request request, Fields query, Response response, Callback callback) throws IOException {
        String contentType = request.getHeaders().get(HttpHeader.CONTENT_TYPE);
        String queryPath = query.getValue("path");
        ArrayNode out = Json.MAPPER.createArrayNode();
        try {
            if (contentType != null && contentType.toLowerCase().startsWith("multipart/form-data")) {
                for (EntryInfo e : uploadMultipart(t, request, contentType, queryPath)) {
                    out.add(uploaded(e));
                }
            } else {
                String path = requirePath(query);
                try (InputStream in = FileUploads.decodedBody(request, ctx.limits.uploadBody())) {
                    out.add(uploaded(FileUploads.write(t, path, in, ctx.limits.uploadBody())));
                }
            }
        } catch (StatusRuntimeException e) {
            throw restError(t, e);
        }
        HttpIo.json(response, callback, 200, out);
    }

    private List<EntryInfo> uploadMultipart(SandboxTarget t, Request request, String contentType, String queryPath)
            throws IOException {
        MultiPartFormData.Parts parts = FileUploads.parseMultipart(request, contentType, ctx.limits, spoolDir);
        try (parts) {
            List<MultiPart.Part> files = new ArrayList<>();
            for (MultiPart.Part part : parts) {
                if ("file".equals(part.getName())) { // a part may have no name at all (Parts.getAll would throw)
                    files.add(part);
                }
            }
            if (files.isEmpty()) {
                throw ApiException.e2b(400, "multipart body has no part named 'file'");
            }
            // every target is checked before the first is written, so a bad part stores nothing
            List<String> paths = new ArrayList<>();
            for (MultiPart.Part part : files) {
                String path = files.size() == 1 && queryPath != null && !queryPath.isEmpty()
                        ? queryPath : part.getFileName();
                if (path == null || path.isEmpty()) {
                    throw ApiException.e2b(400, "file part without a filename and no 'path' query parameter");
                }
                paths.add(InputText.value(path == queryPath ? "query parameter 'path'" : "file part filename", path));
            }
            List<EntryInfo> written = new ArrayList<>();
            for (int i = 0; i < files.size(); i++) {
                try (InputStream in = Content.Source.asInputStream(files.get(i).createContentSource())) {
                    written.add(FileUploads.write(t, paths.get(i), in, ctx.limits.uploadBody()));
                }
            }
            return written;
        }
    }

    private static ObjectNode uploaded(EntryInfo e) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("name", e.getName());
        o.put("type", "file");
        o.put("path", e.getPath());
        return o;
    }

    private static String requirePath(Fields query) {
        String path = query.getValue("path");
        if (path == null || path.isEmpty()) {
            throw ApiException.e2b(400, "query parameter 'path' is required");
        }
        return InputText.value("query parameter 'path'", path);
    }

    /** Worker error → envd REST error (E2B shape) with the status the SDK maps (docs/e2b-wire.md#files-endpoint). */
    private ApiException restError(SandboxTarget t, StatusRuntimeException e) {
        Status.Code code = e.getStatus().getCode();
        if (ctx.sandboxUnreachable(t, e)) {
            return EnvdContext.sandboxNotFound(t.sandboxId());
        }
        String msg = e.getStatus().getDescription() != null ? e.getStatus().getDescription() : code.name();
        switch (code) {
            case NOT_FOUND: return ApiException.e2b(404, msg);
            case INVALID_ARGUMENT: case FAILED_PRECONDITION: case OUT_OF_RANGE: return ApiException.e2b(400, msg);
            case ALREADY_EXISTS: return ApiException.e2b(409, msg);
            case PERMISSION_DENIED: return ApiException.e2b(403, msg);
            case UNAUTHENTICATED: return ApiException.e2b(401, msg);
            case RESOURCE_EXHAUSTED: return ApiException.e2b(507, msg);
            case UNAVAILABLE: return EnvdContext.sandboxNotFound(t.sandboxId());
            case DEADLINE_EXCEEDED: return ApiException.e2b(504, msg);
            default: return ApiException.e2b(500, msg);
        }
    }
}
