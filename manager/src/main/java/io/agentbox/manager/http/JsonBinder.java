package io.agentbox.manager.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.type.LogicalType;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.UnaryOperator;

/**
 * Binds a JSON request body ({@link Json#parseObject}: already one strict JSON object) to a record,
 * for every API family. Values are taken only as they are: a string for a {@code String}, an
 * integral number within range for {@code int}/{@code long} (not {@code "5"}, {@code 5.0} or
 * {@code 5.5}), a number for {@code double}, {@code true}/{@code false} for {@code boolean}, an
 * array for a list, an object for a map or a record; {@code null} is an absent field. A field the
 * record does not name is refused, unless the record says
 * {@code @JsonIgnoreProperties(ignoreUnknown = true)} (E2B bodies, whose SDKs send fields we do not
 * use). A record's compact constructor may check its values and throw {@link ApiException}; it
 * reaches the caller as thrown.
 *
 * <p>Errors: 400 (E2B shape) naming the field by its path, in the API's own style ({@link #quoted}
 * {@code field 'autoResume' must be an object}, {@link #plain} {@code poolSize must be an integer},
 * {@code unknown field 'tem'; expected some of [name, team]}).
 */
public final class JsonBinder {
    private static final ObjectMapper MAPPER = strictMapper();

    /** {@code field 'name'}: the E2B control plane's style. */
    public static final JsonBinder QUOTED = new JsonBinder(path -> "field '" + path + "'");
    /** {@code name}: the management API's style. */
    public static final JsonBinder PLAIN = new JsonBinder(path -> path);

    private final UnaryOperator<String> fieldName;

    private JsonBinder(UnaryOperator<String> fieldName) {
        this.fieldName = fieldName;
    }

    /** How this binder names the field at {@code path} in messages ({@code hostAliases[0].ip}). */
    public String name(String path) {
        return fieldName.apply(path);
    }

    /**
     * {@code body} as a {@code type}.
     *
     * @throws ApiException 400 naming the field for a value of the wrong type or an unknown field;
     *     whatever the record's constructor throws
     */
    public <T> T bind(ObjectNode body, Class<T> type) {
        try {
            return MAPPER.treeToValue(body, type);
        } catch (JsonProcessingException e) {
            throw error(e);
        }
    }

    /**
     * The field {@code name} of {@code body} as a {@code type}, or null when absent or null (for a
     * body read field by field by code that has no record for it yet).
     */
    public <T> T field(ObjectNode body, String name, Class<T> type) {
        JsonNode v = body.get(name);
        if (v == null || v.isNull()) {
            return null;
        }
        try {
            return MAPPER.treeToValue(v, type);
        } catch (JsonProcessingException e) {
            throw ApiException.e2b(400, fieldName.apply(name) + " must be " + kind(type));
        }
    }

    private ApiException error(JsonProcessingException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ApiException api) {
                return api; // a record's own check
            }
        }
        String path = e instanceof JsonMappingException m ? path(m.getPath()) : "";
        if (e instanceof UnrecognizedPropertyException u) {
            String parent = path(u.getPath().subList(0, u.getPath().size() - 1));
            TreeSet<String> known = new TreeSet<>();
            u.getKnownPropertyIds().forEach(k -> known.add(String.valueOf(k)));
            return ApiException.e2b(400, "unknown field '" + InputText.quote(u.getPropertyName()) + "'"
                    + (parent.isEmpty() ? "" : " in " + fieldName.apply(parent)) + "; expected some of " + known);
        }
        if (e instanceof MismatchedInputException m && !path.isEmpty() && m.getTargetType() != null) {
            return ApiException.e2b(400, fieldName.apply(path) + " must be " + kind(m.getTargetType()));
        }
        // e.g. a number beyond the range of its type
        return ApiException.e2b(400, (path.isEmpty() ? "request body" : fieldName.apply(path)) + " is invalid: "
                + Json.firstLine(e.getOriginalMessage()));
    }

    /** {@code a.b[2].c} from Jackson's reference path. */
    private static String path(List<JsonMappingException.Reference> refs) {
        StringBuilder sb = new StringBuilder();
        for (JsonMappingException.Reference r : refs) {
            if (r.getFieldName() != null) {
                if (sb.length() > 0) {
                    sb.append('.');
                }
                sb.append(InputText.quote(r.getFieldName()));
            } else if (r.getIndex() >= 0) {
                sb.append('[').append(r.getIndex()).append(']');
            }
        }
        return sb.toString();
    }

    /** What a value of {@code type} is, for "must be ..." messages. */
    static String kind(Class<?> type) {
        if (type == String.class) {
            return "a string";
        }
        if (type == Integer.class || type == int.class || type == Long.class || type == long.class) {
            return "an integer";
        }
        if (type == Double.class || type == double.class) {
            return "a number";
        }
        if (type == Boolean.class || type == boolean.class) {
            return "true or false";
        }
        if (Collection.class.isAssignableFrom(type) || type.isArray()) {
            return "an array";
        }
        return Map.class.isAssignableFrom(type) || type.isRecord() ? "an object" : "a " + type.getSimpleName();
    }

    private static ObjectMapper strictMapper() {
        JsonMapper mapper = JsonMapper.builder()
                .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
                .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
                .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
                .build();
        // no scalar becomes another: 5 is not "5", "5" is not 5, 1 is not true
        for (LogicalType t : new LogicalType[] {LogicalType.Textual, LogicalType.Integer, LogicalType.Float,
                LogicalType.Boolean}) {
            for (CoercionInputShape shape : new CoercionInputShape[] {CoercionInputShape.Integer,
                    CoercionInputShape.Float, CoercionInputShape.Boolean, CoercionInputShape.String,
                    CoercionInputShape.EmptyString}) {
                boolean natural = t == LogicalType.Textual && shape == CoercionInputShape.String
                        || t == LogicalType.Textual && shape == CoercionInputShape.EmptyString
                        || t == LogicalType.Integer && shape == CoercionInputShape.Integer
                        || t == LogicalType.Float && (shape == CoercionInputShape.Float || shape == CoercionInputShape.Integer)
                        || t == LogicalType.Boolean && shape == CoercionInputShape.Boolean;
                if (!natural) {
                    mapper.coercionConfigFor(t).setCoercion(shape, CoercionAction.Fail);
                }
            }
        }
        return mapper;
    }
}
