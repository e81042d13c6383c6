package io.agentbox.worker.image.store;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentbox.worker.image.ImageConfig;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the store reads from an image config blob (image-spec {@code config.md}): the layers'
 * {@code rootfs.diff_ids}, {@code created}, and the {@code config} object's Env, Entrypoint, Cmd,
 * WorkingDir, User and Labels.
 */
record ConfigBlob(List<String> diffIds, String created, ImageConfig config) {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** @throws IOException naming {@code image} when the JSON is malformed or lacks rootfs.diff_ids */
    static ConfigBlob parse(byte[] json, String image) throws IOException {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (IOException e) {
            throw new IOException("image " + image + ": config is not valid JSON: " + e.getMessage(), e);
        }
        if (root == null || !root.isObject()) {
            throw new IOException("image " + image + ": config is not a JSON object");
        }
        JsonNode ids = root.path("rootfs").path("diff_ids");
        if (!ids.isArray()) {
            throw new IOException("image " + image + ": config has no rootfs.diff_ids");
        }
        List<String> diffIds = new ArrayList<>();
        for (JsonNode id : ids) {
            if (!Digests.isValid(id.asText(null))) {
                throw new IOException("image " + image + ": config lists the diff_id '" + id.asText() + "', not a sha256 digest");
            }
            diffIds.add(id.asText());
        }
        JsonNode c = root.path("config");
        ImageConfig config = new ImageConfig(strings(c.path("Env")), strings(c.path("Entrypoint")), strings(c.path("Cmd")),
                c.path("WorkingDir").asText(""), c.path("User").asText(""), labels(c.path("Labels")));
        return new ConfigBlob(diffIds, root.path("created").asText(""), config);
    }

    private static Map<String, String> labels(JsonNode object) {
        Map<String, String> out = new TreeMap<>();
        if (object.isObject()) {
            object.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
        }
        return out;
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        if (array.isArray()) {
            array.forEach(n -> out.add(n.asText()));
        }
        return out;
    }
}
