package io.agentbox.manager.envd;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.util.JsonFormat;
import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.InputText;
import io.agentbox.manager.http.Json;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Iterator;
import java.util.Map;

/**
 * Proto3 JSON of the envd messages ({@code protocol/src/main/proto/envd/*.proto};
 * docs/e2b-wire.md#proto3-json) through {@link JsonFormat}.
 *
 * <p>Reading: a request message is first read by Jackson with {@link Json#MAPPER}'s strict rules
 * (no duplicate key, no trailing data, nesting at most 64; an empty body is {@code {}}) and its
 * value types are checked against the message's descriptor, so a bad field is named and no
 * lenient conversion happens ({@link JsonFormat} alone would take {@code {"cmd":1}} as
 * {@code "1"} and unquoted names). Then {@link JsonFormat} builds the message: lowerCamelCase or
 * snake_case names, numbers as JSON numbers or strings, enums by name or number, bytes as
 * standard or URL-safe base64; unknown fields are ignored, as envd does. Every string (map keys
 * too) must follow {@link InputText}'s value rule. Errors are {@link ApiException}s with Connect
 * code {@code invalid_argument} naming the field by its path ({@code process.args[2]}).
 *
 * <p>Writing: lowerCamelCase, no whitespace, int64 as strings, enums by name, standard base64,
 * Timestamps as RFC 3339; fields without presence are written even at their default value
 * ({@code "exitCode":0}, {@code "entries":[]}), {@code optional} ones only when set.
 */
final class EnvdCodec {
    private static final JsonFormat.Parser PARSER = JsonFormat.parser().ignoringUnknownFields();
    private static final JsonFormat.Printer PRINTER = JsonFormat.printer()
            .alwaysPrintFieldsWithNoPresence().omittingInsignificantWhitespace();

    private static final BigInteger MIN_INT32 = BigInteger.valueOf(Integer.MIN_VALUE);
    private static final BigInteger MAX_INT32 = BigInteger.valueOf(Integer.MAX_VALUE);
    private static final BigInteger MAX_UINT32 = BigInteger.ONE.shiftLeft(32).subtract(BigInteger.ONE);
    private static final BigInteger MIN_INT64 = BigInteger.valueOf(Long.MIN_VALUE);
    private static final BigInteger MAX_INT64 = BigInteger.valueOf(Long.MAX_VALUE);
    private static final BigInteger MAX_UINT64 = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

    private EnvdCodec() {}

    /**
     * Reads {@code json} (one request message) into {@code builder}.
     *
     * @return {@code builder}, merged
     * @throws ApiException {@code invalid_argument} for malformed JSON, a value of the wrong type
     *     or out of range, or text the value rule refuses
     */
    static <B extends Message.Builder> B parse(byte[] json, B builder) {
        JsonNode node;
        try {
            node = json.length == 0 ? Json.MAPPER.createObjectNode() : Json.MAPPER.readTree(json);
        } catch (IOException e) {
            throw bad("malformed JSON request message");
        }
        if (node == null || !node.isObject()) {
            throw bad("request message must be a JSON object");
        }
        check(node, builder.getDescriptorForType(), "");
        if (node.isEmpty()) {
            return builder; // nothing to merge (an empty body too): skip the second parse
        }
        try {
            // JsonFormat reads only text (into its own Gson tree), so the body is parsed a second time;
            // envd request messages are small (a command line, a path), unlike file contents (/files)
            PARSER.merge(new String(json, StandardCharsets.UTF_8), builder);
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            // the checks above leave few cases (a numeric string that is no number, both members of a oneof)
            throw bad("invalid request message: " + e.getMessage());
        }
        return builder;
    }

    /** The proto3 JSON of {@code message}, UTF-8. */
    static byte[] print(MessageOrBuilder message) {
        try {
            return PRINTER.print(message).getBytes(StandardCharsets.UTF_8);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("cannot print " + message.getDescriptorForType().getFullName(), e);
        }
    }

    static ApiException bad(String message) {
        return ConnectError.of(ConnectError.INVALID_ARGUMENT, message).toException();
    }

    // ---- value checks --------------------------------------------------------------------------

    private static void check(JsonNode obj, Descriptor type, String prefix) {
        for (Iterator<Map.Entry<String, JsonNode>> it = obj.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            FieldDescriptor f = field(type, e.getKey());
            JsonNode v = e.getValue();
            if (f == null || v.isNull()) {
                continue; // unknown fields are ignored; null is the default value
            }
            String name = prefix + f.getJsonName();
            if (f.isMapField()) {
                if (!v.isObject()) {
                    throw bad("field '" + name + "' must be an object");
                }
                FieldDescriptor value = f.getMessageType().findFieldByName("value");
                for (Iterator<Map.Entry<String, JsonNode>> m = v.fields(); m.hasNext(); ) {
                    Map.Entry<String, JsonNode> entry = m.next();
                    String key = InputText.quote(entry.getKey());
                    text("field '" + name + "' key '" + key + "'", entry.getKey());
                    checkValue(value, entry.getValue(), name + "." + key);
                }
            } else if (f.isRepeated()) {
                if (!v.isArray()) {
                    throw bad("field '" + name + "' must be an array");
                }
                for (int i = 0; i < v.size(); i++) {
                    checkValue(f, v.get(i), name + "[" + i + "]");
                }
            } else {
                checkValue(f, v, name);
            }
        }
    }

    private static void checkValue(FieldDescriptor f, JsonNode v, String name) {
        switch (f.getJavaType()) {
            case STRING -> {
                if (!v.isTextual()) {
                    throw bad("field '" + name + "' must be a string");
                }
                text("field '" + name + "'", v.textValue());
            }
            case BOOLEAN -> {
                if (!v.isBoolean()) {
                    throw bad("field '" + name + "' must be true or false");
                }
            }
            case INT, LONG -> integer(f, v, name);
            case ENUM -> enumValue(f.getEnumType(), v, name);
            case BYTE_STRING -> {
                if (!v.isTextual() || !base64(v.textValue())) {
                    throw bad("field '" + name + "' is not base64");
                }
            }
            case MESSAGE -> {
                if (!v.isObject()) {
                    throw bad("field '" + name + "' must be an object");
                }
                check(v, f.getMessageType(), name + ".");
            }
            default -> { } // float and double: no envd request has one
        }
    }

    /** An integral JSON number, or a string holding one, within the field's type. */
    private static void integer(FieldDescriptor f, JsonNode v, String name) {
        BigInteger n;
        try {
            if (v.isIntegralNumber()) {
                n = v.bigIntegerValue();
            } else if (v.isTextual() && v.textValue().length() <= 40) {
                n = new BigDecimal(v.textValue().trim()).toBigIntegerExact();
            } else {
                throw new NumberFormatException();
            }
        } catch (NumberFormatException | ArithmeticException e) {
            throw bad("field '" + name + "' must be an integer");
        }
        boolean unsigned = switch (f.getType()) {
            case UINT32, FIXED32, UINT64, FIXED64 -> true;
            default -> false;
        };
        boolean int32 = f.getJavaType() == FieldDescriptor.JavaType.INT;
        BigInteger min = unsigned ? BigInteger.ZERO : int32 ? MIN_INT32 : MIN_INT64;
        BigInteger max = unsigned ? (int32 ? MAX_UINT32 : MAX_UINT64) : int32 ? MAX_INT32 : MAX_INT64;
        if (n.compareTo(min) < 0 || n.compareTo(max) > 0) {
            throw bad("field '" + name + "' out of range");
        }
    }

    /** A value name of the enum, or a number (JSON or string); an unknown name is an error, not ignored. */
    private static void enumValue(EnumDescriptor type, JsonNode v, String name) {
        if (v.isIntegralNumber() && v.canConvertToInt()) {
            return;
        }
        if (v.isTextual()) {
            if (type.findValueByName(v.textValue()) != null) {
                return;
            }
            try {
                Integer.parseInt(v.textValue());
                return;
            } catch (NumberFormatException e) {
                throw bad("field '" + name + "' has unknown value '" + InputText.quote(v.textValue()) + "'");
            }
        }
        throw bad("field '" + name + "' must be an enum name or number");
    }

    private static boolean base64(String s) {
        try {
            if (s.indexOf('-') >= 0 || s.indexOf('_') >= 0) {
                Base64.getUrlDecoder().decode(s);
            } else {
                Base64.getDecoder().decode(s);
            }
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static void text(String what, String s) {
        String problem = InputText.problem(s, true);
        if (problem != null) {
            throw bad(what + " " + problem + "; NUL and unpaired surrogates are not allowed");
        }
    }

    /** The field a JSON name denotes: its lowerCamelCase JSON name or its proto (snake_case) name. */
    private static FieldDescriptor field(Descriptor type, String jsonName) {
        FieldDescriptor f = type.findFieldByName(jsonName);
        if (f != null) {
            return f;
        }
        for (FieldDescriptor candidate : type.getFields()) {
            if (candidate.getJsonName().equals(jsonName)) {
                return candidate;
            }
        }
        return null;
    }
}
