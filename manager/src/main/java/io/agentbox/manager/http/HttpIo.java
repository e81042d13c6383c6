package io.agentbox.manager.http;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;
import org.eclipse.jetty.util.UrlEncoded;

/**
 * Blocking request-body reading with a size limit, strict query parsing and JSON/empty response
 * writing. A body the client cannot deliver intact (a bad chunk size, a connection closed early)
 * is the client's fault: 400, or 408 when it stopped sending.
 */
public final class HttpIo {
    private HttpIo() {}

    /**
     * The request's query parameters, percent-decoded as UTF-8.
     *
     * @throws ApiException 400 (E2B shape) naming the first parameter with a malformed
     *     {@code %} escape or bytes that are not UTF-8
     */
    public static Fields query(Request request) {
        Fields fields;
        try {
            fields = Request.extractQueryParameters(request);
        } catch (IllegalArgumentException | IllegalStateException e) {
            // Jetty's HttpException flavours of both: a bad escape, a truncated escape, bad UTF-8
            throw badQuery(request.getHttpURI().getQuery());
        }
        // no parameter of any route may carry NUL or a lone surrogate: PostgreSQL refuses NUL in text
        for (Fields.Field f : fields) {
            InputText.value("query parameter name", f.getName());
            for (String v : f.getValues()) {
                InputText.value("query parameter '" + InputText.quote(f.getName()) + "'", v);
            }
        }
        return fields;
    }

    /** 400 naming the first {@code name=value} pair of {@code rawQuery} that does not decode. */
    static ApiException badQuery(String rawQuery) {
        String raw = rawQuery == null ? "" : rawQuery;
        for (String pair : raw.split("&")) {
            int eq = pair.indexOf('=');
            String rawName = eq < 0 ? pair : pair.substring(0, eq);
            String name;
            try {
                name = decode(rawName);
            } catch (IllegalArgumentException e) {
                return ApiException.e2b(400, "malformed query parameter name '" + InputText.quote(rawName)
                        + "': a % must be followed by two hex digits and the bytes must be UTF-8");
            }
            try {
                decode(pair);
            } catch (IllegalArgumentException e) {
                return ApiException.e2b(400, "malformed query parameter '" + InputText.quote(name)
                        + "': a % must be followed by two hex digits and the bytes must be UTF-8");
            }
        }
        return ApiException.e2b(400, "malformed query string");
    }

    private static String decode(String s) {
        Fields one = new Fields();
        UrlEncoded.decodeUtf8To(s, 0, s.length(), one);
        return one.getNames().isEmpty() ? "" : one.getNames().iterator().next();
    }

    /**
     * Reads the whole request body (chunked or with Content-Length).
     *
     * @param limit largest accepted body in bytes
     * @throws ApiException 413 (E2B shape) when the body is larger than {@code limit}; 400 when
     *     it cannot be read (bad chunked framing, early end); 408 when the client stopped sending
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
            throw unreadable(e);
        }
    }

    /**
     * {@code in} (a request body, possibly decoded) with every read failure turned into the
     * {@link ApiException} of {@link #unreadable}, so a broken body never looks like a server fault.
     */
    public static InputStream clientInput(InputStream in) {
        return new FilterInputStream(in) {
            @Override
            public int read() {
                try {
                    return super.read();
                } catch (IOException e) {
                    throw unreadable(e);
                }
            }

            @Override
            public int read(byte[] b, int off, int len) {
                try {
                    return super.read(b, off, len);
                } catch (IOException e) {
                    throw unreadable(e);
                }
            }

            @Override
            public void close() {
                try {
                    super.close();
                } catch (IOException e) {
                    throw unreadable(e);
                }
            }

            @Override
            public long skip(long n) {
                try {
                    return super.skip(n);
                } catch (IOException e) {
                    throw unreadable(e);
                }
            }
        };
    }

    /** 408 when the client stopped sending (idle timeout), else 400 with the reason. */
    public static ApiException unreadable(IOException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof TimeoutException) {
                return ApiException.e2b(408, "request body not received in time");
            }
        }
        String why = e.getMessage() == null || e.getMessage().isBlank() ? e.getClass().getSimpleName() : Json.firstLine(e.getMessage());
        return ApiException.e2b(400, "request body cannot be read: " + why);
    }

    /** Most bytes of an oversized body read and discarded so the client can read the 413 cleanly. */
    public static final long MAX_DRAIN = 16L << 20;

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
        json(response, callback, status, Json.bytes(body));
    }

    /** Writes {@code bytes}, a serialized JSON value, as {@code application/json} with {@code status} and completes {@code callback}. */
    public static void json(Response response, Callback callback, int status, byte[] bytes) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, bytes.length);
        response.write(true, ByteBuffer.wrap(bytes), callback);
    }

    /**
     * Writes an empty response and completes {@code callback}; any status but 204 and 304 says
     * {@code Content-Length: 0}, since E2B clients parse an empty chunked 2xx as JSON and fail
     * (docs/e2b-wire.md#empty-responses).
     */
    public static void empty(Response response, Callback callback, int status) {
        response.setStatus(status);
        if (status != 204 && status != 304) {
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, 0);
        }
        response.write(true, null, callback);
    }

    /**
     * Answers an error with {@code status} and the JSON {@code body}, replacing whatever headers the
     * response had (but an {@code Allow} of a 405). The body left unread is discarded first
     * ({@link #discardBody}) so the client can read the answer; when that is not possible the
     * connection is closed after it. A response already committed (a stream broke midway) fails
     * {@code callback} instead.
     *
     * @param keep header names (besides {@code Allow}) kept on the error response, such as the request id
     */
    public static void error(Request request, Response response, Callback callback, int status, JsonNode body,
                             String... keep) {
        if (response.isCommitted()) {
            callback.failed(new IllegalStateException("error " + status + " after the response was committed: " + body));
            return;
        }
        // errors are often answered before the body was read (a bad token, an unknown route)
        boolean reusable = discardBody(request);
        String allow = response.getHeaders().get(HttpHeader.ALLOW);
        String[] kept = new String[keep.length];
        for (int i = 0; i < keep.length; i++) {
            kept[i] = response.getHeaders().get(keep[i]);
        }
        response.getHeaders().clear();
        if (!reusable) {
            response.getHeaders().put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString());
        }
        if (allow != null && status == 405) {
            response.getHeaders().put(HttpHeader.ALLOW, allow);
        }
        for (int i = 0; i < keep.length; i++) {
            if (kept[i] != null) {
                response.getHeaders().put(keep[i], kept[i]);
            }
        }
        json(response, callback, status, body);
    }

    public static String header(Request request, String name) {
        return request.getHeaders().get(name);
    }
}
