package io.agentbox.manager.ports;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The status line and header fields of an HTTP/1.x response read from a sandbox's server
 * (RFC 9112 §4, §5), plus the bytes that followed them.
 *
 * @param status   status code
 * @param fields   header fields in order, as {name, value} pairs
 * @param leftover bytes after the blank line (start of the body or of the upgraded protocol)
 */
record HttpHead(int status, List<String[]> fields, byte[] leftover) {
    /** Largest response head accepted, like common proxies' defaults. */
    static final int MAX_BYTES = 64 * 1024;

    /**
     * Parses {@code buf[0..len)} once it holds a whole head.
     *
     * @return null while the blank line has not arrived yet
     * @throws IllegalArgumentException for a malformed head or one over {@link #MAX_BYTES}
     */
    static HttpHead parse(byte[] buf, int len) {
        int end = -1;
        for (int i = 3; i < len; i++) {
            if (buf[i] == '\n' && buf[i - 1] == '\r' && buf[i - 2] == '\n' && buf[i - 3] == '\r') {
                end = i + 1;
                break;
            }
        }
        if (end < 0) {
            if (len >= MAX_BYTES) {
                throw new IllegalArgumentException("response head exceeds " + MAX_BYTES + " bytes");
            }
            return null;
        }
        String[] lines = new String(buf, 0, end - 4, StandardCharsets.ISO_8859_1).split("\r\n");
        String[] status = lines[0].split(" ", 3);
        if (status.length < 2 || !status[0].startsWith("HTTP/1.")) {
            throw new IllegalArgumentException("not an HTTP/1.x response: " + lines[0]);
        }
        int code;
        try {
            code = Integer.parseInt(status[1]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad status code in: " + lines[0]);
        }
        if (code < 100 || code > 599) {
            throw new IllegalArgumentException("bad status code in: " + lines[0]);
        }
        List<String[]> fields = new ArrayList<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon <= 0 || Character.isWhitespace(lines[i].charAt(0))) {
                throw new IllegalArgumentException("malformed header line: " + lines[i]);
            }
            fields.add(new String[] {lines[i].substring(0, colon).trim(), lines[i].substring(colon + 1).trim()});
        }
        byte[] leftover = new byte[len - end];
        System.arraycopy(buf, end, leftover, 0, leftover.length);
        return new HttpHead(code, fields, leftover);
    }
}
