package io.agentbox.manager.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.http.Json;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Connect streaming envelopes (docs/e2b-wire.md#streams-and-envelopes): {@code flags:u8 length:u32be payload}; flags
 * 0x02 marks the end-of-stream envelope, whose JSON may carry an {@code error}.
 */
final class ConnectFrames {
    private ConnectFrames() {}

    /** One message envelope around {@code json}. */
    static byte[] envelope(String json) {
        byte[] payload = json.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(5 + payload.length).put((byte) 0).putInt(payload.length).put(payload).array();
    }

    /**
     * The {@code exitCode} of the stream's {@code end} event.
     *
     * @throws BenchException when the stream reports an error, lacks the end event or the
     *     end-of-stream envelope, or is cut short
     */
    static int exitCode(ByteBuffer stream, String sandboxId) {
        Integer exit = null;
        while (stream.remaining() >= 5) {
            int flags = stream.get() & 0xff;
            int length = stream.getInt();
            if (length < 0 || length > stream.remaining()) {
                break;
            }
            byte[] payload = new byte[length];
            stream.get(payload);
            JsonNode n = parse(payload, sandboxId);
            if ((flags & 0x02) != 0) {
                if (n.has("error")) {
                    throw new BenchException("run command in " + sandboxId + ": " + n.get("error"));
                }
                if (exit == null) {
                    throw new BenchException("run command in " + sandboxId + ": stream ended without an end event");
                }
                return exit;
            }
            JsonNode end = n.path("event").path("end");
            if (!end.isMissingNode()) {
                exit = end.path("exitCode").asInt(0);
            }
        }
        throw new BenchException("run command in " + sandboxId + ": stream cut short (no end-of-stream envelope)");
    }

    private static JsonNode parse(byte[] payload, String sandboxId) {
        try {
            return Json.MAPPER.readTree(payload);
        } catch (IOException e) {
            throw new BenchException("run command in " + sandboxId + ": malformed envelope: " + e.getMessage());
        }
    }
}
