package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.manager.store.HubStore;
import io.agentbox.protocol.v1.Template;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BaseTemplateTest {
    @Test
    void commandLineSettingsChangeOnlyWhatTheyName(@TempDir Path dir) {
        try (HubStore store = HubStore.open(dir)) {
            Template seeded = store.template("base").orElseThrow();
            assertThat(seeded.getNetwork()).isEqualTo("isolated");
            assertThat(seeded.getPoolSize()).isEqualTo(4);

            BaseTemplate.UNCHANGED.applyTo(store);
            assertThat(store.template("base")).contains(seeded);

            new BaseTemplate("host", 0).applyTo(store);
            assertThat(store.template("base").orElseThrow().getNetwork()).isEqualTo("host");
            assertThat(store.template("base").orElseThrow().getPoolSize()).isEqualTo(4);
            new BaseTemplate("none", 0).applyTo(store);
            assertThat(store.template("base").orElseThrow().getNetwork()).isEqualTo("none");

            new BaseTemplate(null, 2).applyTo(store);
            assertThat(store.template("base").orElseThrow().getNetwork()).isEqualTo("none");
            assertThat(store.template("base").orElseThrow().getPoolSize()).isEqualTo(2);
            assertThat(store.template("base").orElseThrow().getRuntime()).isEqualTo("local");

            new BaseTemplate(null, 0, "kubernetes").applyTo(store);
            assertThat(store.template("base").orElseThrow().getRuntime()).isEqualTo("kubernetes");
            assertThat(store.template("base").orElseThrow().getPoolSize()).isEqualTo(2);
        }
    }

    @Test
    void rejectsUnknownNetworksAndSizes() {
        assertThatThrownBy(() -> new BaseTemplate("bridge", 0)).hasMessageContaining("'isolated', 'none' or 'host'");
        assertThatThrownBy(() -> new BaseTemplate(null, -1)).hasMessageContaining("pool size");
        assertThatThrownBy(() -> new BaseTemplate(null, 0, "docker")).hasMessageContaining("'local' or 'kubernetes'");
    }
}
