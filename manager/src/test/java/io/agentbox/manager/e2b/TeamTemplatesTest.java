package io.agentbox.manager.e2b;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.manager.store.TemplateStore;
import io.agentbox.manager.testing.ApiUnderTest;
import io.agentbox.protocol.v1.Template;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The hub template that serves a team's built template ({@code built-<build id>}) is not a
 * configured template: no API key can start it, list it or see its name by that internal name
 * (found in a new-user trial: another team's key created sandboxes of it). The owner reaches it
 * through its build's names only (StandaloneTemplateBuildSdkTest).
 */
class TeamTemplatesTest {
    @Test
    void aBuiltTemplatesInternalNameIsNeitherStartableNorListed(@TempDir Path dir) throws Exception {
        try (ApiUnderTest api = ApiUnderTest.start(dir)) {
            String internal = TemplateStore.BUILT_PREFIX + "0b7e3c1e-0000-4000-8000-000000000001";
            api.store.upsertTemplate(api.store.template("base").orElseThrow().toBuilder().setName(internal).build());
            assertThat(api.store.templateStore().get(internal)).as("the serving template exists in the store").isPresent();

            HttpResponse<String> create = api.call("POST", "/v2/sandboxes", api.adminKey, "{\"templateID\":\"" + internal + "\"}");
            assertThat(create.statusCode()).as(create.body()).isEqualTo(404);
            // the message echoes the id asked for, and names only the configured templates
            assertThat(create.body()).endsWith("available templates: base\"}");
            HttpResponse<String> list = api.call("GET", "/templates", api.adminKey, null);
            assertThat(list.statusCode()).isEqualTo(200);
            assertThat(list.body()).contains("\"base\"").doesNotContain(internal);
            assertThat(api.store.templates()).extracting(Template::getName).doesNotContain(internal);
        }
    }
}
