package io.agentbox.manager.api;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/** Blocking request-body reading with a size limit and JSON/empty response writing. */
public final class HttpIo {
    private HttpIo() {}

    /**
     * Reads the whole request body (chunked or with Content-Length).
     *
     * @param limit largest accepted body in bytes
     * @throws ApiException 413 (E2B shape) when the body is larger than {@code limit}
     */
    public static byte[] readBody(Request request, int limit) {
        long declared = request.getLength();
        try (InputStream in = Content.Source.asInputStream(request)) {
            if (declared > limit) {
                drain(in, declared);
                throw tooLarge(limit);
            }
            byte[] out = in.readNBytes(limit);
            if (out.length == limit && in.read() != -1) {
                drain(in, MAX_DRAIN);
                throw tooLarge(limit);
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read request body", e);
        }
    }

    /** Most bytes of an oversized body read and discarded so the client can read the 413 cleanly. */
    static final long MAX_DRAIN = 16L << 20;

    /** Discards up to {@code min(max, MAX_DRAIN)} bytes; larger bodies are cut off by closing the connection. */
    private static void drain(InputStream in, long max) throws IOException {
        long budget = Math.min(max, MAX_DRAIN);
        while (budget > 0) {
            long skipped = in.skip(budget);
            if (skipped <= 0) {
                if (in.read() < 0) {
                    return;
                }
                skipped = 1;
            }
            budget -= skipped;
        }
    }

    /**
     * Reads and discards what is left of the request body, at most {@link #MAX_DRAIN} bytes, before
     * an error is answered. A server that answers and closes while body bytes are still arriving
     * makes the kernel reset the connection, and a client that sends its whole body before reading
     * (fetch does) gets EPIPE/ECONNRESET instead of the answer.
     *
     * @return true when the body was consumed to its end, so the connection can serve the next
     *     request; false when more than {@link #MAX_DRAIN} bytes are left (or declared), the client
     *     waits for {@code 100 Continue} (it has not sent the body and will not), or reading failed:
     *     then answer with {@code Connection: close}
     */
    public static boolean discardBody(Request request) {
        if (request.getHeaders().contains(HttpHeader.EXPECT, "100-continue")) {
            return false;
        }
        if (request.getLength() > MAX_DRAIN) {
            return false;
        }
        try (InputStream in = Content.Source.asInputStream(request)) {
            drain(in, MAX_DRAIN);
            return in.read() < 0;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    public static ApiException tooLarge(long limit) {
        return ApiException.e2b(413, "request body larger than " + limit + " bytes");
    }

    /** Writes {@code body} as {@code application/json} with {@code status} and completes {@code callback}. */
    public static void json(Response response, Callback callback, int status, JsonNode body) {
        byte[] bytes = Json.bytes(body);
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, bytes.length);
        response.write(true, ByteBuffer.wrap(bytes), callback);
    }

    /** Writes an empty response (e.g. 204) and completes {@code callback}. */
    public static void empty(Response response, Callback callback, int status) {
        response.setStatus(status);
        response.write(true, null, callback);
    }

    public static String header(Request request, String name) {
        return request.getHeaders().get(name);
    }
}
