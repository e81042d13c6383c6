package io.agentbox.manager.nativeapi;

import io.agentbox.manager.builds.BuildRequest;
import io.agentbox.manager.http.InputText;
import io.agentbox.protocol.v1.TemplateBuildStep;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The body of {@code POST /v1/templates} (docs/native-api.md#building-templates), bound by
 * {@link io.agentbox.manager.http.JsonBinder#QUOTED} and turned into the request the E2B build
 * trigger takes ({@link BuildRequest}), so both surfaces run the same build.
 *
 * <p>Base: {@code image} (an OCI reference the worker pulls) or {@code fromTemplate} (a configured
 * template or one of the team's built ones); neither = {@code base}. Steps in order, each an object
 * with one of: {@code run} (a shell command; {@code user} beside it runs that step as
 * {@code user} or {@code root}), {@code env} (build-time variables), {@code workdir}, or
 * {@code user} alone (the user of later steps and of the template). No COPY: files come with the
 * image, or through the E2B SDK's {@code Template.build}.
 *
 * @param name         {@code alias[:tag]}; a name the team has already makes a new build of that template
 * @param cpuCount     1..64 CPUs of build steps and of the template's sandboxes; absent = unlimited
 * @param memoryMb     128..1048576 MB likewise; absent = unlimited
 * @param force        run every step again instead of taking it from the worker's step cache
 */
record NewTemplate(String name, String image, String fromTemplate, List<Step> steps, String startCmd, String readyCmd,
                   Integer cpuCount, Integer memoryMb, Boolean force) {
    /** Users a step may run as (a sandbox has exactly these identities). */
    static final Set<String> USERS = Set.of("user", "root");

    /** One step: exactly one of {@code run}, {@code env}, {@code workdir}; or {@code user} alone. */
    record Step(String run, String user, Map<String, String> env, String workdir) {}

    /** The checked base and steps as the build trigger takes them. @throws io.agentbox.manager.http.ApiException 400 naming the field */
    BuildRequest request() {
        if (image != null && fromTemplate != null) {
            throw V1Errors.of(400, "fields 'image' and 'fromTemplate' exclude each other: a template starts from one");
        }
        String img = image == null ? null : nonBlank("image", image);
        String from = fromTemplate == null ? (img == null ? "base" : null) : nonBlank("fromTemplate", fromTemplate);
        List<Step> given = steps == null ? List.of() : steps;
        if (given.size() > BuildRequest.MAX_STEPS) {
            throw V1Errors.of(400, "field 'steps' holds " + given.size() + " steps; at most " + BuildRequest.MAX_STEPS);
        }
        List<TemplateBuildStep> out = new ArrayList<>();
        for (int i = 0; i < given.size(); i++) {
            out.add(step(given.get(i), "steps[" + i + "]"));
        }
        return new BuildRequest(img, from, out, command("startCmd", startCmd), command("readyCmd", readyCmd),
                Boolean.TRUE.equals(force));
    }

    /** The template's name, checked for presence (its form is the E2B name rule's). */
    String requireName() {
        return nonBlank("name", name);
    }

    int cpu() {
        return range("cpuCount", cpuCount, 1, 64);
    }

    int memory() {
        return range("memoryMb", memoryMb, 128, 1 << 20);
    }

    private static TemplateBuildStep step(Step s, String where) {
        if (s == null) {
            throw V1Errors.of(400, "field '" + where + "' must be an object");
        }
        int kinds = (s.run() != null ? 1 : 0) + (s.env() != null ? 1 : 0) + (s.workdir() != null ? 1 : 0);
        if (kinds > 1 || (kinds == 0 && s.user() == null) || (s.user() != null && (s.env() != null || s.workdir() != null))) {
            throw V1Errors.of(400, "field '" + where + "' must have one of 'run' (with an optional 'user'), 'env', "
                    + "'workdir', or 'user' alone");
        }
        if (s.user() != null && !USERS.contains(s.user())) {
            throw V1Errors.of(400, "field '" + where + ".user' must be 'user' or 'root' (the identities a sandbox has)");
        }
        TemplateBuildStep.Builder b = TemplateBuildStep.newBuilder();
        if (s.run() != null) {
            b.setType("RUN").addArgs(nonBlank(where + ".run", s.run()));
            if (s.user() != null) {
                b.addArgs(s.user());
            }
        } else if (s.env() != null) {
            if (s.env().isEmpty()) {
                throw V1Errors.of(400, "field '" + where + ".env' must name at least one variable");
            }
            b.setType("ENV");
            InputText.env("field '" + where + ".env'", new LinkedHashMap<>(s.env())).forEach((k, v) -> b.addArgs(k).addArgs(v));
        } else if (s.workdir() != null) {
            b.setType("WORKDIR").addArgs(nonBlank(where + ".workdir", s.workdir()));
        } else {
            b.setType("USER").addArgs(s.user());
        }
        long chars = b.getArgsList().stream().mapToLong(String::length).sum();
        if (chars > BuildRequest.MAX_STEP_CHARS) {
            throw V1Errors.of(400, "field '" + where + "' holds more than " + BuildRequest.MAX_STEP_CHARS + " characters");
        }
        return b.build();
    }

    private static String command(String field, String value) {
        if (value == null) {
            return "";
        }
        if (value.length() > BuildRequest.MAX_COMMAND_CHARS) {
            throw V1Errors.of(400, "field '" + field + "' is longer than " + BuildRequest.MAX_COMMAND_CHARS + " characters");
        }
        return InputText.value("field '" + field + "'", value);
    }

    private static String nonBlank(String field, String value) {
        if (value == null || value.isBlank()) {
            throw V1Errors.of(400, "field '" + field + "' must be a non-empty string");
        }
        return InputText.value("field '" + field + "'", value);
    }

    private static int range(String field, Integer value, int min, int max) {
        if (value == null) {
            return 0;
        }
        if (value < min || value > max) {
            throw V1Errors.of(400, "field '" + field + "' must be an integer from " + min + " to " + max);
        }
        return value;
    }
}
