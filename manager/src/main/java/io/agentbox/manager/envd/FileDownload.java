package io.agentbox.manager.envd;

import io.agentbox.protocol.v1.FileChunk;
import io.agentbox.protocol.v1.FilesystemServiceGrpc;
import io.agentbox.protocol.v1.PathRequest;
import io.grpc.Channel;
import io.grpc.Context;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * A file streamed from a sandbox to an HTTP response chunk by chunk as the worker reads it (envd's
 * {@code GET /files} and the native API's file read): 200 {@code application/octet-stream} once the
 * first chunk (or the end of an empty file) arrives, so a worker error before that is still an
 * error status.
 */
public final class FileDownload {
    /** Longest time a download may take end to end. */
    public static final long DEADLINE_MS = TimeUnit.MINUTES.toMillis(30);

    private FileDownload() {}

    /**
     * @param headers adds headers beyond status and content type (e.g. Content-Disposition), may do nothing
     * @param errors  the API's error for a worker failure before anything was sent
     * @throws IOException when the worker fails after the response was committed (the connection is cut)
     */
    public static void stream(Channel channel, PathRequest req, Response response, Callback callback,
                              Consumer<Response> headers, Function<StatusRuntimeException, RuntimeException> errors)
            throws IOException {
        Context.CancellableContext call = Context.current().withCancellation();
        Context previous = call.attach();
        boolean committed = false;
        try {
            Iterator<FileChunk> chunks = FilesystemServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS).readFile(req);
            while (chunks.hasNext()) {
                FileChunk chunk = chunks.next();
                if (!committed) {
                    ok(response, headers);
                    committed = true;
                }
                Content.Sink.write(response, false, chunk.getData().asReadOnlyByteBuffer());
            }
            if (!committed) {
                ok(response, headers);
                response.getHeaders().put(HttpHeader.CONTENT_LENGTH, 0);
            }
            response.write(true, ByteBuffer.allocate(0), callback);
        } catch (StatusRuntimeException e) {
            if (committed) {
                throw new IOException("download failed midway: " + e.getStatus(), e);
            }
            throw errors.apply(e);
        } finally {
            call.detach(previous);
            call.cancel(null);
        }
    }

    private static void ok(Response response, Consumer<Response> headers) {
        response.setStatus(200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/octet-stream");
        headers.accept(response);
    }
}
