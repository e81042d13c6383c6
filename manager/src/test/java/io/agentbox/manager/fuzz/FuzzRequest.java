package io.agentbox.manager.fuzz;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * One request the fuzzer sends: a well-formed starting point that {@link Mutator} bends.
 *
 * @param route     the route it started from, e.g. {@code "hub POST /v2/sandboxes"}
 * @param port      where it goes
 * @param method    request-line method (may be garbage after mutation)
 * @param path      request-line path without the query
 * @param query     raw query without '?', may be empty
 * @param headers   header lines {@code "Name: value"}
 * @param body      null = none
 * @param streaming the response is a stream: read only its head
 */
record FuzzRequest(String route, int port, String method, String path, String query, List<String> headers, byte[] body,
                   boolean streaming) {

    FuzzRequest {
        headers = new ArrayList<>(headers);
    }

    FuzzRequest with(String method, String path, String query, List<String> headers, byte[] body) {
        return new FuzzRequest(route, port, method, path, query, headers, body, streaming);
    }

    /**
     * The bytes on the wire. A {@code Transfer-Encoding} header set by a mutation means the body
     * goes chunked as given (framing included); otherwise Content-Length is added unless a
     * mutation set its own.
     */
    byte[] wire() {
        StringBuilder head = new StringBuilder(method).append(' ').append(path);
        if (!query.isEmpty()) {
            head.append('?').append(query);
        }
        head.append(" HTTP/1.1\r\n");
        boolean host = false;
        boolean length = false;
        boolean chunked = false;
        for (String h : headers) {
            head.append(h).append("\r\n");
            host |= h.regionMatches(true, 0, "Host:", 0, 5);
            length |= h.regionMatches(true, 0, "Content-Length:", 0, 15);
            chunked |= h.regionMatches(true, 0, "Transfer-Encoding:", 0, 18);
        }
        if (!host) {
            head.append("Host: 127.0.0.1\r\n");
        }
        if (body != null && !length && !chunked) {
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        head.append("Connection: close\r\n\r\n");
        byte[] h = head.toString().getBytes(StandardCharsets.UTF_8);
        byte[] b = body == null ? new byte[0] : body;
        byte[] out = new byte[h.length + b.length];
        System.arraycopy(h, 0, out, 0, h.length);
        System.arraycopy(b, 0, out, h.length, b.length);
        return out;
    }

    /** The request as readable text (non-printable bytes as \xNN), cut at {@code max} characters. */
    String describe(int max) {
        byte[] w = wire();
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < w.length && s.length() < max; i++) {
            int c = w[i] & 0xff;
            if (c == '\n') {
                s.append("\\n\n    ");
            } else if (c == '\r') {
                s.append("\\r");
            } else if (c < 0x20 || c >= 0x7f) {
                s.append(String.format("\\x%02x", c));
            } else {
                s.append((char) c);
            }
        }
        return s.length() >= max ? s + "… (" + w.length + " bytes)" : s.toString();
    }
}
