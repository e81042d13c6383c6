package io.agentbox.manager.testing;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.http.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;

/**
 * HTTP/1.1 over a plain socket, for requests ordinary clients refuse to send (bad escapes, broken
 * chunked framing, lying Content-Length): one request per connection, one response read back.
 */
public final class RawHttp {
    /** Largest response body kept; the rest is read and dropped. */
    static final int MAX_BODY = 1 << 20;

    private RawHttp() {}

    /**
     * One response.
     *
     * @param status HTTP status, or -1 when the server closed the connection without answering
     * @param head   status line and headers as received
     * @param body   the body (de-chunked), empty when not read
     */
    public record Reply(int status, String head, byte[] body) {
        public String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        /** The body as JSON, or null when it is not JSON. */
        public JsonNode json() {
            try {
                return Json.MAPPER.readTree(body);
            } catch (IOException e) {
                return null;
            }
        }

        /** {@code message} of a JSON error body, or the raw text. */
        public String message() {
            JsonNode j = json();
            return j != null && j.has("message") ? j.get("message").asText() : text();
        }

        @Override
        public String toString() {
            String t = text();
            return status + " " + (t.length() > 300 ? t.substring(0, 300) + "…" : t);
        }
    }

    /** {@code METHOD target HTTP/1.1}, the given header lines ({@code "Name: value"}), Content-Length when {@code body} is not null, then the body. */
    public static byte[] request(String method, String target, byte[] body, String... headers) {
        StringBuilder head = new StringBuilder(method).append(' ').append(target).append(" HTTP/1.1\r\n");
        boolean host = false;
        for (String h : headers) {
            head.append(h).append("\r\n");
            host |= h.regionMatches(true, 0, "Host:", 0, 5);
        }
        if (!host) {
            head.append("Host: 127.0.0.1\r\n");
        }
        if (body != null) {
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        head.append("Connection: close\r\n\r\n");
        byte[] h = head.toString().getBytes(StandardCharsets.ISO_8859_1);
        if (body == null) {
            return h;
        }
        byte[] out = new byte[h.length + body.length];
        System.arraycopy(h, 0, out, 0, h.length);
        System.arraycopy(body, 0, out, h.length, body.length);
        return out;
    }

    /** {@link #request} with a UTF-8 body. */
    public static byte[] request(String method, String target, String body, String... headers) {
        return request(method, target, body == null ? null : body.getBytes(StandardCharsets.UTF_8), headers);
    }

    /** Sends {@code request} on a new connection to 127.0.0.1:{@code port} and reads the whole response. */
    public static Reply exchange(int port, byte[] request) throws IOException {
        return exchange(port, request, false, false, Duration.ofSeconds(30));
    }

    /**
     * Sends {@code request} on a new connection and reads one response.
     *
     * @param stream       a 200 is a stream: stop after its headers (error answers are still read whole)
     * @param halfClose    shut the sending side after the request (the server sees the end of input)
     * @param timeout      longest wait for any read
     * @throws java.net.SocketTimeoutException when the server stays silent longer than {@code timeout}
     */
    public static Reply exchange(int port, byte[] request, boolean stream, boolean halfClose, Duration timeout)
            throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout((int) timeout.toMillis());
            s.setSoLinger(true, 0); // no TIME_WAIT pile-up over thousands of requests
            OutputStream out = s.getOutputStream();
            try {
                out.write(request);
                out.flush();
                if (halfClose) {
                    s.shutdownOutput();
                }
            } catch (SocketException e) {
                // the server may answer and close before reading everything (e.g. 413, 400): read what it said
            }
            InputStream in = s.getInputStream();
            while (true) {
                String responseHead = readHead(in);
                if (responseHead == null) {
                    return new Reply(-1, "", new byte[0]);
                }
                int status = Integer.parseInt(responseHead.substring(9, 12));
                if (status >= 100 && status < 200) {
                    continue; // interim (100 Continue): the real answer follows
                }
                boolean head = request.length > 5 && new String(request, 0, 5, StandardCharsets.ISO_8859_1).equals("HEAD ");
                byte[] body = head || status == 204 || status == 304 || stream && status == 200
                        ? new byte[0] : readBody(in, responseHead);
                return new Reply(status, responseHead, body);
            }
        }
    }

    /** Status line and headers, or null when the connection ended (or was reset) before any byte. */
    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b;
            try {
                b = in.read();
            } catch (SocketException e) {
                if (head.size() == 0) {
                    return null;
                }
                throw e;
            }
            if (b < 0) {
                if (head.size() == 0) {
                    return null;
                }
                throw new IOException("connection ended inside the response head: " + head);
            }
            head.write(b);
            matched = (b == '\r' && (matched == 0 || matched == 2)) || (b == '\n' && (matched == 1 || matched == 3))
                    ? matched + 1 : (b == '\r' ? 1 : 0);
            if (head.size() > 64 * 1024) {
                throw new IOException("response head larger than 64 KiB");
            }
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }

    private static byte[] readBody(InputStream in, String head) throws IOException {
        String lower = head.toLowerCase(Locale.ROOT);
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if (lower.contains("\r\ntransfer-encoding: chunked")) {
            while (true) {
                String line = readLine(in);
                int size = Integer.parseInt(line.split(";")[0].trim(), 16);
                if (size == 0) {
                    while (!readLine(in).isEmpty()) {
                        // trailers
                    }
                    return body.toByteArray();
                }
                copy(in, body, size);
                readLine(in);
            }
        }
        int at = lower.indexOf("\r\ncontent-length:");
        if (at >= 0) {
            int end = lower.indexOf("\r\n", at + 2);
            copy(in, body, Long.parseLong(lower.substring(at + 17, end).trim()));
            return body.toByteArray();
        }
        copy(in, body, Long.MAX_VALUE);
        return body.toByteArray();
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        int b;
        while ((b = in.read()) >= 0 && b != '\n') {
            if (b != '\r') {
                line.append((char) b);
            }
            if (line.length() > 8192) {
                throw new IOException("chunk line too long");
            }
        }
        if (b < 0) {
            throw new IOException("connection ended inside a chunked body");
        }
        return line.toString();
    }

    /** Copies up to {@code n} bytes (to EOF when {@code Long.MAX_VALUE}), keeping at most {@link #MAX_BODY}. */
    private static void copy(InputStream in, ByteArrayOutputStream out, long n) throws IOException {
        byte[] buf = new byte[8192];
        long left = n;
        while (left > 0) {
            int r = in.read(buf, 0, (int) Math.min(buf.length, left));
            if (r < 0) {
                if (n == Long.MAX_VALUE) {
                    return;
                }
                throw new IOException("connection ended " + left + " bytes before the end of the body");
            }
            int keep = Math.max(0, Math.min(r, MAX_BODY - out.size()));
            out.write(buf, 0, keep);
            left -= r;
        }
    }
}
