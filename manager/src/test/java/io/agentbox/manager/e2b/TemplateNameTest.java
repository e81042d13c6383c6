package io.agentbox.manager.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.manager.http.ApiException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** E2B template names (docs/e2b-wire.md#names-tags-and-ids). */
class TemplateNameTest {
    @Test
    void namesParseIntoNamespaceAliasAndTag() {
        assertThat(TemplateName.parse(" My-Tpl:V1 ")).isEqualTo(new TemplateName(null, "my-tpl", "v1"));
        assertThat(TemplateName.parse("team.a/x_y")).isEqualTo(new TemplateName("team.a", "x_y", null));
        assertThat(TemplateName.parse("x").tagOrDefault()).isEqualTo("default");
        assertThat(TemplateName.parse("team/x:1.2").requireTeam("team").tag()).isEqualTo("1.2");
    }

    @Test
    void badNamesTagsAndForeignNamespacesAre400() {
        for (String bad : new String[] {"", "a b", "a/b/c", "x:", "x:a b", "x:123e4567-e89b-12d3-a456-426614174000", "ä"}) {
            assertThatThrownBy(() -> TemplateName.parse(bad)).as(bad).isInstanceOfSatisfying(ApiException.class,
                    e -> assertThat(e.status()).isEqualTo(400));
        }
        assertThatThrownBy(() -> TemplateName.parse("other/x").requireTeam("team"))
                .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.body().get("message").asText()).contains("other"));
        assertThat(TemplateName.checkTags(List.of("A", "a", "b"))).containsExactly("a", "b");
    }
}
