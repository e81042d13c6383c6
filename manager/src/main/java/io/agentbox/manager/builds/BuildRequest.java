package io.agentbox.manager.builds;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentbox.manager.http.ApiException;
import io.agentbox.protocol.v1.TemplateBuildStep;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * E2B's {@code TemplateBuildStartV2}, the body of the build trigger (docs/e2b-wire.md#build-spec),
 * checked: exactly one of {@code fromImage} / {@code fromTemplate}, steps with a string
 * {@code type}, string {@code args}, a boolean {@code force} and, for COPY, a 64-hex
 * {@code filesHash}. Fields the JS SDK adds outside the schema ({@code forceUpload},
 * {@code resolveSymlinks}, {@code gzip}) and {@code fromImageRegistry} are ignored (docs/e2b-wire.md#step-types).
 * Step semantics are the worker's (docs/template-builds.md).
 *
 * @param fromImage    the image to start from, or null
 * @param fromTemplate the template to start from, or null
 */
public record BuildRequest(String fromImage, String fromTemplate, List<TemplateBuildStep> steps, String startCmd,
                           String readyCmd, boolean force) {
    /** Steps per build (the worker's limit too). */
    public static final int MAX_STEPS = 1000;
    /** Characters of one step's arguments (the worker's limit too). */
    public static final int MAX_STEP_CHARS = 256 << 10;
    /** Characters of a start or ready command. */
    public static final int MAX_COMMAND_CHARS = 64 << 10;

    public BuildRequest {
        steps = List.copyOf(steps);
    }

    /** COPY steps' files hashes, in order, without repeats. */
    public List<String> filesHashes() {
        return steps.stream().map(TemplateBuildStep::getFilesHash).filter(h -> !h.isEmpty()).distinct().toList();
    }

    /** @throws ApiException 400 naming the bad field */
    public static BuildRequest parse(ObjectNode body) {
        String fromImage = optText(body, "fromImage");
        String fromTemplate = optText(body, "fromTemplate");
        if ((fromImage == null) == (fromTemplate == null)) {
            throw ApiException.e2b(400, "exactly one of 'fromImage' and 'fromTemplate' must be a non-empty string");
        }
        String startCmd = optText(body, "startCmd");
        String readyCmd = optText(body, "readyCmd");
        for (String[] c : new String[][] {{"startCmd", startCmd}, {"readyCmd", readyCmd}}) {
            if (c[1] != null && c[1].length() > MAX_COMMAND_CHARS) {
                throw ApiException.e2b(400, "'" + c[0] + "' is longer than " + MAX_COMMAND_CHARS + " characters");
            }
        }
        boolean force = bool(body.get("force"), "force");
        JsonNode stepsNode = body.get("steps");
        List<TemplateBuildStep> steps = new ArrayList<>();
        if (stepsNode != null && !stepsNode.isNull()) {
            if (!stepsNode.isArray()) {
                throw ApiException.e2b(400, "'steps' must be an array");
            }
            if (stepsNode.size() > MAX_STEPS) {
                throw ApiException.e2b(400, "a build has at most " + MAX_STEPS + " steps, this one " + stepsNode.size());
            }
            int n = 0;
            for (JsonNode s : stepsNode) {
                n++;
                steps.add(step(s, n));
            }
        }
        return new BuildRequest(fromImage, fromTemplate, steps, startCmd == null ? "" : startCmd,
                readyCmd == null ? "" : readyCmd, force);
    }

    private static TemplateBuildStep step(JsonNode s, int n) {
        String where = "steps[" + (n - 1) + "]";
        if (!s.isObject()) {
            throw ApiException.e2b(400, where + " must be an object");
        }
        JsonNode type = s.get("type");
        if (type == null || !type.isTextual() || type.textValue().isBlank() || type.textValue().length() > 32) {
            throw ApiException.e2b(400, where + ".type must be a step type such as RUN, COPY, ENV, WORKDIR, USER");
        }
        TemplateBuildStep.Builder b = TemplateBuildStep.newBuilder().setType(type.textValue().toUpperCase(Locale.ROOT))
                .setForce(bool(s.get("force"), where + ".force"));
        JsonNode args = s.get("args");
        long chars = 0;
        if (args != null && !args.isNull()) {
            if (!args.isArray()) {
                throw ApiException.e2b(400, where + ".args must be an array of strings");
            }
            for (JsonNode a : args) {
                if (!a.isTextual() || a.textValue().indexOf('\0') >= 0) {
                    throw ApiException.e2b(400, where + ".args must be an array of strings without NUL");
                }
                chars += a.textValue().length();
                b.addArgs(a.textValue());
            }
        }
        if (chars > MAX_STEP_CHARS) {
            throw ApiException.e2b(400, where + ".args hold more than " + MAX_STEP_CHARS + " characters");
        }
        JsonNode hash = s.get("filesHash");
        if (hash != null && !hash.isNull()) {
            if (!hash.isTextual() || !TemplateFiles.HASH.matcher(hash.textValue()).matches()) {
                throw ApiException.e2b(400, where + ".filesHash must be 64 lowercase hex digits");
            }
            b.setFilesHash(hash.textValue());
        }
        if ((b.getType().equals("COPY") || b.getType().equals("ADD")) && b.getFilesHash().isEmpty()) {
            throw ApiException.e2b(400, where + ": a COPY step needs its filesHash");
        }
        return b.build();
    }

    private static String optText(ObjectNode body, String field) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull() || (v.isTextual() && v.textValue().isEmpty())) {
            return null;
        }
        if (!v.isTextual() || v.textValue().indexOf('\0') >= 0) {
            throw ApiException.e2b(400, "'" + field + "' must be a string");
        }
        return v.textValue();
    }

    private static boolean bool(JsonNode v, String field) {
        if (v == null || v.isNull()) {
            return false;
        }
        if (!v.isBoolean()) {
            throw ApiException.e2b(400, "'" + field + "' must be a boolean");
        }
        return v.booleanValue();
    }
}
