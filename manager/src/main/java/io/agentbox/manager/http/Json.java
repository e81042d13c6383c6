package io.agentbox.manager.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.regex.Pattern;

/**
 * The shared Jackson mapper and strict JSON body parsing (malformed → 400). Reading is strict: a
 * duplicate key, anything after the top-level value, invalid UTF-8 or nesting deeper than 64 fails.
 */
public final class Json {
    public static final ObjectMapper MAPPER = JsonMapper.builder(JsonFactory.builder()
                    // bodies are already size-limited; also bound nesting so a small body cannot blow the stack
                    .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(64).build())
                    // {"a":1,"a":2} has no meaning we could pick without surprising someone
                    .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                    .build())
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    private Json() {}

    /**
     * Parses a request body that must be a JSON object; an empty body (no bytes at all) is an
     * empty object, as clients send no body for calls without parameters.
     *
     * @throws ApiException 400 (E2B shape) when the body is not exactly one JSON object
     *     (malformed, {@code null}, another type, a duplicate key, trailing data)
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
        if (node == null || node.isMissingNode()) {
            throw ApiException.e2b(400, "request body must be a JSON object, got only white space");
        }
        if (!node.isObject()) {
            throw ApiException.e2b(400, "request body must be a JSON object, got " + kind(node));
        }
        return (ObjectNode) node;
    }

    /** {@code null}, {@code an array}, {@code a string}...: what a JSON value is, for error messages. */
    public static String kind(JsonNode node) {
        return switch (node.getNodeType()) {
            case NULL -> "null";
            case ARRAY -> "an array";
            case STRING -> "a string";
            case NUMBER -> "a number";
            case BOOLEAN -> "a boolean";
            case OBJECT, POJO -> "an object";
            default -> "nothing";
        };
    }

    public static byte[] bytes(JsonNode node) {
        try {
            return MAPPER.writeValueAsBytes(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize JSON", e);
        }
    }

    /** Where Jackson names its own setting in a limit's message: ", from `StreamReadConstraints.getMaxNestingDepth()`". */
    private static final Pattern SETTING = Pattern.compile(", from `[^`]*`");

    /** The first line of a parser's message, for a client: without the name of the parser setting behind a limit. */
    static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return SETTING.matcher(nl < 0 ? s : s.substring(0, nl)).replaceAll("");
    }
}
