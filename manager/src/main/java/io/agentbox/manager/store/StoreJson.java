package io.agentbox.manager.store;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/** JSON columns: string maps and string lists, encoded compactly; corrupt columns fail loudly. */
final class StoreJson {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<Map<String, String>> STRING_MAP = new TypeReference<>() {};
    private static final TypeReference<List<String>> STRING_LIST = new TypeReference<>() {};

    private StoreJson() {}

    static String write(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (IOException e) {
            throw new StoreException("cannot encode " + value.getClass().getSimpleName() + " as JSON", e);
        }
    }

    static Map<String, String> stringMap(String json) {
        return read(json, STRING_MAP);
    }

    static List<String> stringList(String json) {
        return read(json, STRING_LIST);
    }

    static <T> T read(String json, Class<T> type) {
        try {
            return JSON.readValue(json, type);
        } catch (IOException e) {
            throw new StoreException("corrupt JSON column: " + json, e);
        }
    }

    private static <T> T read(String json, TypeReference<T> type) {
        try {
            return JSON.readValue(json, type);
        } catch (IOException e) {
            throw new StoreException("corrupt JSON column: " + json, e);
        }
    }
}
