package io.agentbox.manager.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;

/** The shared Jackson mapper and strict JSON body parsing (malformed → 400). */
public final class Json {
    public static final ObjectMapper MAPPER = new ObjectMapper();

    static {
        // bodies are already size-limited; also bound nesting so a small body cannot blow the stack
        MAPPER.getFactory().setStreamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(64).build());
    }

    private Json() {}

    /**
     * Parses a request body that must be a JSON object; an empty body is an empty object.
     *
     * @throws ApiException 400 (E2B shape) when the body is not a JSON object
     */
    public static ObjectNode parseObject(byte[] body) {
        if (body.length == 0) {
            return MAPPER.createObjectNode();
        }
        JsonNode node;
        try {
            node = MAPPER.readTree(body);
        } catch (IOException e) {
            throw ApiException.e2b(400, "malformed JSON body: " + firstLine(e.getMessage()));
        }
        if (node == null || node.isMissingNode() || node.isNull()) {
            return MAPPER.createObjectNode();
        }
        if (!node.isObject()) {
            throw ApiException.e2b(400, "request body must be a JSON object");
        }
        return (ObjectNode) node;
    }

    public static byte[] bytes(JsonNode node) {
        try {
            return MAPPER.writeValueAsBytes(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize JSON", e);
        }
    }

    static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
