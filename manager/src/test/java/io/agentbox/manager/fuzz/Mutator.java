package io.agentbox.manager.fuzz;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.http.Json;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Bends a well-formed {@link FuzzRequest}: methods, path segments, query parameters, headers
 * (auth, routing, content type/encoding, framing) and bodies (JSON values and raw bytes). Every
 * choice comes from the given {@link Random}, so a seed reproduces the same requests.
 */
final class Mutator {
    static final String[] METHODS = {"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE", "get",
            "FOO", "PRI", "G\u0000T", "CONNECT", "POST ", "X".repeat(300)};
    static final String[] SEGMENTS = {"%00", "%zz", "%", "%2", "%2F", "..", "%2e%2e", "%C0%AF", "%ED%A0%80", "%E2%80%AE",
            "a;b=c", "*", "", "%20", "caf\u00e9", "\u202E", "x".repeat(3000), "sandboxes", "v2", "49983", "8080",
            "zzzzzzzzzzzz-local", "{id}", "%7B%7D", "~", "%5C", "a\tb"};
    static final String[] QUERY = {"%zz", "%", "%e2%82", "%ff", "a=%00", "state=bogus", "state=running,paused",
            "state=", "limit=-1", "limit=0", "limit=99999999999", "limit=abc", "nextToken=!!!", "nextToken=LTE",
            "metadata=%25zz", "metadata=a%3D%25", "path=", "path=%00", "path=/etc/shadow", "path=/tmp/../../etc",
            "username=root", "username=%E2%80%AE", "signature=v1_x", "signature_expiration=abc", "resourceVersion=-5",
            "resourceVersion=1e9", "team=%ff", "&&&", "=", "==", "a=b=c", "x=" + "y".repeat(9000), "path=/tmp/fz&path=/tmp/fy"};
    static final String[] CONTENT_TYPES = {"application/json", "application/connect+json", "text/plain",
            "multipart/form-data", "multipart/form-data; boundary=zz", "multipart/form-data; boundary=",
            "application/octet-stream", "application/json; charset=utf-16", "", "\u0001", "application/proto",
            "application/x-www-form-urlencoded"};
    static final String[] HEADERS = {"Content-Encoding: gzip", "Content-Encoding: br", "Content-Encoding: gzip, gzip",
            "Content-Encoding: identity", "Expect: 100-continue", "Expect: nonsense", "Connect-Timeout-Ms: -1",
            "Connect-Timeout-Ms: abc", "Connect-Timeout-Ms: 99999999999999", "Connect-Timeout-Ms: 1",
            "Authorization: Basic cm9vdDo=", "Authorization: Basic !!!", "Authorization: Bearer x", "Authorization: ",
            "X-API-Key: e2b_0000", "X-API-Key: ", "X-Access-Token: x", "E2b-Sandbox-Id: zzzzzzzzzzzz-local",
            "E2b-Sandbox-Id: ", "E2b-Sandbox-Port: 8080", "E2b-Sandbox-Port: 0", "E2b-Sandbox-Port: 99999",
            "E2b-Sandbox-Port: x", "Host: 49983-zzzzzzzzzzzz-local.example", "Host: 8080-zzzzzzzzzzzz-local.e2b.app",
            "Host: a b", "Host: ", "Range: bytes=0-1", "Accept-Encoding: gzip", "Cookie: a=b",
            "X-Long: " + "v".repeat(20_000), "Bad Name: x", "X-Ctl: a\u0001b", "Content-Length: -1",
            "Content-Length: abc", "Content-Length: 99999999999", "Content-Length: 1, 2", "Transfer-Encoding: gzip",
            "AGENTBOX-MANAGER-TOKEN: abm_x", "Upgrade: websocket", "Connection: Upgrade", "X-Next-Token: 1"};
    static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final Random rnd;

    Mutator(Random rnd) {
        this.rnd = rnd;
    }

    /** 0–3 mutations of {@code r}; a few requests stay as they are so valid paths are exercised too. */
    FuzzRequest mutate(FuzzRequest r) {
        int n = rnd.nextInt(10) < 2 ? 0 : 1 + rnd.nextInt(3);
        for (int i = 0; i < n; i++) {
            r = switch (rnd.nextInt(10)) {
                case 0 -> r.with(pick(METHODS), r.path(), r.query(), r.headers(), r.body());
                case 1, 2 -> r.with(r.method(), path(r.path()), r.query(), r.headers(), r.body());
                case 3, 4 -> r.with(r.method(), r.path(), query(r.query()), r.headers(), r.body());
                case 5, 6 -> headers(r);
                default -> body(r);
            };
        }
        return r;
    }

    private String path(String path) {
        List<String> segs = new ArrayList<>(Arrays.asList(path.substring(1).split("/", -1)));
        switch (rnd.nextInt(6)) {
            case 0 -> segs.set(rnd.nextInt(segs.size()), pick(SEGMENTS));
            case 1 -> segs.add(pick(SEGMENTS));
            case 2 -> segs.remove(segs.size() - 1);
            case 3 -> segs.add(rnd.nextInt(segs.size() + 1), "");
            case 4 -> {
                return rnd.nextBoolean() ? "*" : "http://127.0.0.1" + path;
            }
            default -> segs.set(rnd.nextInt(segs.size()), segs.get(rnd.nextInt(segs.size())).toUpperCase());
        }
        return "/" + String.join("/", segs);
    }

    private String query(String query) {
        String extra = pick(QUERY);
        return switch (rnd.nextInt(3)) {
            case 0 -> extra;
            case 1 -> query.isEmpty() ? extra : query + "&" + extra;
            default -> extra + (query.isEmpty() ? "" : "&" + query);
        };
    }

    private FuzzRequest headers(FuzzRequest r) {
        List<String> h = new ArrayList<>(r.headers());
        byte[] body = r.body();
        switch (rnd.nextInt(6)) {
            case 0 -> {
                if (!h.isEmpty()) {
                    h.remove(rnd.nextInt(h.size()));
                }
            }
            case 1 -> h.add(pick(HEADERS));
            case 2 -> {
                h.removeIf(x -> x.regionMatches(true, 0, "Content-Type:", 0, 13));
                h.add("Content-Type: " + pick(CONTENT_TYPES));
            }
            case 3 -> {
                // chunked framing, valid or broken
                byte[] b = body == null ? new byte[0] : body;
                String[] sizes = {Integer.toHexString(b.length), "zz", "-1", "ffffffffffffffff", Integer.toHexString(b.length + 7),
                        Integer.toHexString(b.length) + ";ext=1", ""};
                String size = pick(sizes);
                String end = rnd.nextInt(4) == 0 ? "" : "\r\n0\r\n\r\n";
                h.add("Transfer-Encoding: chunked");
                byte[] framed = concat((size + "\r\n").getBytes(StandardCharsets.ISO_8859_1), b,
                        end.getBytes(StandardCharsets.ISO_8859_1));
                return r.with(r.method(), r.path(), r.query(), h, framed);
            }
            case 4 -> {
                // a Content-Length that lies (shorter, longer) about the body that follows
                int len = body == null ? 0 : body.length;
                h.add("Content-Length: " + Math.max(0, len + (rnd.nextBoolean() ? -1 - rnd.nextInt(5) : 1 + rnd.nextInt(50))));
                return r.with(r.method(), r.path(), r.query(), h, body == null ? new byte[0] : body);
            }
            default -> {
                // duplicate an existing header with a junk value
                if (!h.isEmpty()) {
                    String one = h.get(rnd.nextInt(h.size()));
                    int colon = one.indexOf(':');
                    h.add(one.substring(0, Math.max(colon, 0)) + ": " + pick(SEGMENTS));
                }
            }
        }
        return r.with(r.method(), r.path(), r.query(), h, body);
    }

    private FuzzRequest body(FuzzRequest r) {
        byte[] b = r.body() == null ? new byte[0] : r.body();
        boolean enveloped = b.length >= 5 && b[0] == 0 && r.streaming();
        byte[] payload = enveloped ? Arrays.copyOfRange(b, 5, b.length) : b;
        JsonNode json = parse(payload);
        byte[] out;
        if (json != null && rnd.nextBoolean()) {
            out = Json.bytes(mutateJson(json, 0));
            if (rnd.nextInt(8) == 0) {
                out = duplicateKey(out);
            }
        } else {
            out = bytes(payload);
        }
        if (enveloped) {
            out = rnd.nextInt(5) == 0 ? envelopeBroken(out) : envelope(out);
        }
        return r.with(r.method(), r.path(), r.query(), r.headers(), out);
    }

    private JsonNode mutateJson(JsonNode node, int depth) {
        if (node.isObject() && node.size() > 0 && rnd.nextInt(4) != 0) {
            ObjectNode o = ((ObjectNode) node).deepCopy();
            List<String> names = new ArrayList<>();
            o.fieldNames().forEachRemaining(names::add);
            String f = names.get(rnd.nextInt(names.size()));
            switch (rnd.nextInt(4)) {
                case 0 -> o.remove(f);
                case 1 -> o.set(pickText(), randomValue(depth));
                default -> o.set(f, rnd.nextBoolean() ? mutateJson(o.get(f), depth + 1) : randomValue(depth));
            }
            return o;
        }
        if (node.isArray() && node.size() > 0 && rnd.nextBoolean()) {
            ArrayNode a = ((ArrayNode) node).deepCopy();
            a.set(rnd.nextInt(a.size()), randomValue(depth));
            return a;
        }
        return randomValue(depth);
    }

    private JsonNode randomValue(int depth) {
        return switch (rnd.nextInt(12)) {
            case 0 -> NODES.nullNode();
            case 1 -> NODES.booleanNode(rnd.nextBoolean());
            case 2 -> NODES.numberNode(pick(new long[] {0, -1, 1, 9, 15, 300, 86401, Integer.MAX_VALUE, Integer.MIN_VALUE,
                    Long.MAX_VALUE, Long.MIN_VALUE, 4294967296L}));
            case 3 -> NODES.numberNode(pick(new double[] {0.5, -0.0, 1e308, 1e-300, 3.0}));
            case 4 -> NODES.numberNode(new java.math.BigInteger("123456789012345678901234567890"));
            case 5 -> NODES.arrayNode().add(pickText()).add(1);
            case 6 -> depth < 3 ? NODES.objectNode().put(pickText(), pickText()) : NODES.objectNode();
            case 7 -> {
                JsonNode deep = NODES.numberNode(1);
                for (int i = 0; i < 40 + rnd.nextInt(40); i++) {
                    deep = NODES.arrayNode().add(deep);
                }
                yield deep;
            }
            default -> NODES.textNode(pickText());
        };
    }

    private String pickText() {
        String[] texts = {"", " ", "base", "a\u0000b", "\u202Eevil", "\ud800", "\udc00x", "line\nbreak", "tab\t",
                "\u001b[31m", "caf\u00e9", "\ud83d\ude00", "/tmp/fz", "/", "..", "/etc/passwd", "/proc/self/mem",
                "SIGNAL_SIGKILL", "SIGNAL_SIGTERM", "running", "user", "root", "x".repeat(5000), "=", "A=B", "%zz",
                "zzzzzzzzzzzz-local", "local", "fz-cluster", "-1", "9999999999", "true", "null"};
        return pick(texts);
    }

    private byte[] bytes(byte[] b) {
        switch (rnd.nextInt(7)) {
            case 0 -> {
                return b.length == 0 ? new byte[] {0} : Arrays.copyOf(b, rnd.nextInt(b.length));
            }
            case 1 -> {
                byte[] c = b.clone();
                for (int i = 0; i < 1 + rnd.nextInt(4) && c.length > 0; i++) {
                    c[rnd.nextInt(c.length)] = (byte) rnd.nextInt(256);
                }
                return c;
            }
            case 2 -> {
                byte[] junk = new byte[1 + rnd.nextInt(64)];
                rnd.nextBytes(junk);
                int at = b.length == 0 ? 0 : rnd.nextInt(b.length + 1);
                return concat(Arrays.copyOf(b, at), junk, Arrays.copyOfRange(b, at, b.length));
            }
            case 3 -> {
                byte[] junk = new byte[rnd.nextInt(2048)];
                rnd.nextBytes(junk);
                return junk;
            }
            case 4 -> {
                return new byte[0];
            }
            case 5 -> {
                return concat(b, b);
            }
            default -> {
                // larger than the control-plane body limit: 413 expected, never a hang or a 5xx
                byte[] big = new byte[(1 << 20) + 1 + rnd.nextInt(1024)];
                Arrays.fill(big, (byte) ' ');
                big[0] = '{';
                return big;
            }
        }
    }

    private byte[] duplicateKey(byte[] json) {
        String s = new String(json, StandardCharsets.UTF_8);
        int colon = s.indexOf("\":");
        if (!s.startsWith("{\"") || colon < 0) {
            return json;
        }
        return ("{" + s.substring(1, colon + 2) + "1," + s.substring(1)).getBytes(StandardCharsets.UTF_8);
    }

    static byte[] envelope(byte[] json) {
        byte[] out = new byte[5 + json.length];
        out[1] = (byte) (json.length >>> 24);
        out[2] = (byte) (json.length >>> 16);
        out[3] = (byte) (json.length >>> 8);
        out[4] = (byte) json.length;
        System.arraycopy(json, 0, out, 5, json.length);
        return out;
    }

    private byte[] envelopeBroken(byte[] json) {
        byte[] out = envelope(json);
        switch (rnd.nextInt(3)) {
            case 0 -> out[0] = (byte) rnd.nextInt(256);
            case 1 -> out[1] = (byte) 0x7f; // claims ~2 GiB
            default -> out[4] = (byte) (out[4] + 3);
        }
        return out;
    }

    private static JsonNode parse(byte[] b) {
        try {
            return b.length == 0 ? null : Json.MAPPER.readTree(b);
        } catch (Exception e) {
            return null;
        }
    }

    private String pick(String[] a) {
        return a[rnd.nextInt(a.length)];
    }

    private long pick(long[] a) {
        return a[rnd.nextInt(a.length)];
    }

    private double pick(double[] a) {
        return a[rnd.nextInt(a.length)];
    }

    static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }
}
