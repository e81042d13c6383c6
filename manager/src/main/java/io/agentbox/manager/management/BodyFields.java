package io.agentbox.manager.management;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.api.ApiException;
import io.agentbox.manager.api.InputText;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Typed reads of a JSON request body. A field of the wrong type, or a field the endpoint does not
 * know, is a 400 naming the field: typos fail loudly instead of being ignored. Strings follow
 * {@link InputText}'s label rule, map values its value rule (400 naming the field otherwise).
 */
final class BodyFields {
    private final ObjectNode node;

    BodyFields(ObjectNode node) {
        this.node = node;
    }

    ObjectNode node() {
        return node;
    }

    /** Refuses fields outside {@code known}. */
    BodyFields only(Set<String> known) {
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!known.contains(f)) {
                throw bad("unknown field '" + f + "'; expected some of " + new java.util.TreeSet<>(known));
            }
        }
        return this;
    }

    String string(String field, String dflt) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isTextual()) {
            throw bad(field + " must be a string");
        }
        return InputText.label(field, v.asText());
    }

    String requiredString(String field) {
        String v = string(field, null);
        if (v == null || v.isEmpty()) {
            throw bad(field + " is required");
        }
        return v;
    }

    int integer(String field, int dflt) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isIntegralNumber() || !v.canConvertToInt()) {
            throw bad(field + " must be an integer");
        }
        return v.asInt();
    }

    /** A non-negative integer, or null when absent. */
    Long optionalLong(String field) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() < 0) {
            throw bad(field + " must be a non-negative integer");
        }
        return v.asLong();
    }

    /** An RFC 3339 timestamp as epoch milliseconds, or null when absent. */
    Long timestamp(String field) {
        String v = string(field, null);
        if (v == null) {
            return null;
        }
        try {
            return Instant.parse(v).toEpochMilli();
        } catch (DateTimeParseException e) {
            throw bad(field + " must be an RFC 3339 timestamp such as 2030-01-01T00:00:00Z, got '" + v + "'");
        }
    }

    List<String> strings(String field) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return List.of();
        }
        if (!v.isArray()) {
            throw bad(field + " must be an array of strings");
        }
        List<String> out = new ArrayList<>();
        for (JsonNode e : v) {
            if (!e.isTextual()) {
                throw bad(field + " must be an array of strings");
            }
            out.add(InputText.label(field + "[" + out.size() + "]", e.asText()));
        }
        return out;
    }

    /** An object of strings used as environment variables ({@link InputText#env}). */
    Map<String, String> envMap(String field) {
        return InputText.env(field, stringMap(field));
    }

    Map<String, String> stringMap(String field) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return Map.of();
        }
        if (!v.isObject()) {
            throw bad(field + " must be an object of strings");
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = v.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String key = InputText.quote(e.getKey());
            if (!e.getValue().isTextual()) {
                throw bad(field + "." + key + " must be a string");
            }
            InputText.label(field + " key '" + key + "'", e.getKey());
            out.put(e.getKey(), InputText.value(field + "." + key, e.getValue().asText()));
        }
        return out;
    }

    static ApiException bad(String message) {
        return ApiException.e2b(400, message);
    }
}
