package io.agentbox.worker.runtime.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.agentbox.worker.runtime.kubernetes.model.SandboxPool;
import io.agentbox.worker.runtime.kubernetes.model.SandboxTemplate;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every YAML file under {@code deploy/} parses as Kubernetes objects, and each AgentBox CRD there
 * agrees with its Java model: group, version, plural, scope, and every spec/status field by name
 * and type in both directions (a field only in Java would be pruned by the API server; a field
 * only in the schema would never be read).
 */
class KubeCrdSchemaTest {
    private static final Map<String, Class<? extends HasMetadata>> MODELS =
            Map.of("SandboxPool", SandboxPool.class, "SandboxTemplate", SandboxTemplate.class);

    @Test
    void everyDeployYamlParsesAndEveryCrdMatchesItsModel() throws IOException {
        List<CustomResourceDefinition> crds = new ArrayList<>();
        for (Path file : yamlFiles()) {
            for (String doc : Files.readString(file).split("(?m)^---\\s*$")) {
                if (doc.lines().allMatch(l -> l.isBlank() || l.stripLeading().startsWith("#"))) {
                    continue;
                }
                Object parsed = Serialization.unmarshal(doc);
                assertThat(parsed).as("a Kubernetes object in %s", file).isInstanceOf(KubernetesResource.class);
                if (parsed instanceof CustomResourceDefinition crd && crd.getSpec().getGroup().equals("agentbox.io")) {
                    crds.add(crd);
                }
            }
        }
        assertThat(crds).extracting(c -> c.getSpec().getNames().getKind()).containsExactlyInAnyOrderElementsOf(MODELS.keySet());
        for (CustomResourceDefinition crd : crds) {
            checkCrd(crd, MODELS.get(crd.getSpec().getNames().getKind()));
        }
    }

    private static void checkCrd(CustomResourceDefinition crd, Class<? extends HasMetadata> model) {
        String kind = crd.getSpec().getNames().getKind();
        assertThat(crd.getMetadata().getName()).isEqualTo(HasMetadata.getFullResourceName(model));
        assertThat(crd.getSpec().getNames().getPlural()).isEqualTo(HasMetadata.getPlural(model));
        assertThat(crd.getSpec().getScope()).as(kind + " scope")
                .isEqualTo(Namespaced.class.isAssignableFrom(model) ? "Namespaced" : "Cluster");
        assertThat(crd.getSpec().getVersions()).extracting(CustomResourceDefinitionVersion::getName)
                .containsExactly(HasMetadata.getVersion(model));
        CustomResourceDefinitionVersion version = crd.getSpec().getVersions().get(0);
        assertThat(version.getSubresources().getStatus()).as(kind + " status subresource").isNotNull();
        assertThat(version.getAdditionalPrinterColumns()).as(kind + " printer columns").isNotEmpty();
        JSONSchemaProps root = version.getSchema().getOpenAPIV3Schema();
        for (String part : List.of("spec", "status")) {
            Type javaType = typeArgument(model, part.equals("spec") ? 0 : 1);
            checkType(kind + "." + part, root.getProperties().get(part), javaType);
        }
    }

    private static void checkType(String where, JSONSchemaProps schema, Type type) {
        assertThat(schema).as(where + " in the schema").isNotNull();
        Class<?> raw = raw(type);
        if (raw == String.class) {
            assertThat(schema.getType()).as(where).isEqualTo("string");
        } else if (raw == Integer.class || raw == int.class || raw == Long.class || raw == long.class) {
            assertThat(schema.getType()).as(where).isEqualTo("integer");
        } else if (raw == Boolean.class || raw == boolean.class) {
            assertThat(schema.getType()).as(where).isEqualTo("boolean");
        } else if (List.class.isAssignableFrom(raw)) {
            assertThat(schema.getType()).as(where).isEqualTo("array");
            checkType(where + "[]", schema.getItems().getSchema(), ((ParameterizedType) type).getActualTypeArguments()[0]);
        } else {
            assertThat(schema.getType()).as(where).isEqualTo("object");
            Map<String, Type> fields = fields(raw);
            Map<String, JSONSchemaProps> props = schema.getProperties() == null ? Map.of() : schema.getProperties();
            if (raw.getPackageName().startsWith("io.fabric8.")) {
                // a Kubernetes type: either left open, or described by a subset of its own fields
                assertThat(Boolean.TRUE.equals(schema.getXKubernetesPreserveUnknownFields()) || !props.isEmpty())
                        .as(where + " is open or described").isTrue();
                assertThat(fields.keySet()).as(where + " fields").containsAll(props.keySet());
            } else {
                assertThat(props.keySet()).as(where + " fields").containsExactlyInAnyOrderElementsOf(fields.keySet());
            }
            for (var e : props.entrySet()) {
                checkType(where + "." + e.getKey(), e.getValue(), fields.get(e.getKey()));
            }
        }
    }

    private static Map<String, Type> fields(Class<?> c) {
        Map<String, Type> out = new TreeMap<>();
        for (Field f : c.getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers()) || f.getName().equals("additionalProperties")) {
                continue;
            }
            JsonProperty p = f.getAnnotation(JsonProperty.class);
            out.put(p != null && !p.value().isEmpty() ? p.value() : f.getName(), f.getGenericType());
        }
        return out;
    }

    private static Type typeArgument(Class<?> model, int index) {
        return ((ParameterizedType) model.getGenericSuperclass()).getActualTypeArguments()[index];
    }

    private static Class<?> raw(Type t) {
        return t instanceof ParameterizedType p ? (Class<?>) p.getRawType() : (Class<?>) t;
    }

    private static List<Path> yamlFiles() throws IOException {
        Path deploy = Path.of("..", "deploy");
        assertThat(deploy).isDirectory();
        try (Stream<Path> s = Files.walk(deploy)) {
            // deploy/prometheus holds Prometheus's own configuration (the manager's MetricsDashboardTest reads it)
            List<Path> files = s.filter(p -> p.toString().endsWith(".yaml") || p.toString().endsWith(".yml"))
                    .filter(p -> !p.startsWith(deploy.resolve("prometheus"))).sorted().toList();
            assertThat(files).isNotEmpty();
            return files;
        }
    }
}
