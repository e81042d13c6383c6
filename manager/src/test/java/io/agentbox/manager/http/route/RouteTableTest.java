package io.agentbox.manager.http.route;

import io.agentbox.manager.http.ApiException;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RouteTableTest {
    private final RouteTable<String> table = RouteTable.<String>builder()
            .add("GET", "/sandboxes/{id}", "detail")
            .add("DELETE", "/sandboxes/{id}", "kill")
            .add("GET", "/sandboxes/metrics", "metrics")
            .add("DELETE", "/templates/{templateID}", "delete-template")
            .add("GET", "/templates/{templateID}/builds/{buildID}/status", "status")
            .build();

    @Test
    void aLiteralSegmentBeatsAParameterAndParametersAreDecodedAfterMatching() {
        assertThat(table.lookup("GET", "/sandboxes/metrics").route().endpoint()).isEqualTo("metrics");
        RouteTable.Lookup<String> one = table.lookup("GET", "/sandboxes/abc-local");
        assertThat(one.route().endpoint()).isEqualTo("detail");
        assertThat(one.params()).isEqualTo(Map.of("id", "abc-local"));
        // an encoded slash stays in its segment: one name with a namespace and a tag
        RouteTable.Lookup<String> named = table.lookup("DELETE", "/templates/my-team%2Fmy-snap%3Av2");
        assertThat(named.route().endpoint()).isEqualTo("delete-template");
        assertThat(named.params()).isEqualTo(Map.of("templateID", "my-team/my-snap:v2"));
        assertThat(table.lookup("GET", "/templates/t1/builds/b%201/status").params())
                .isEqualTo(Map.of("templateID", "t1", "buildID", "b 1"));
    }

    @Test
    void aKnownPathWithAnotherMethodListsTheAllowedOnesAndAnUnknownPathNone() {
        RouteTable.Lookup<String> wrong = table.lookup("POST", "/sandboxes/abc");
        assertThat(wrong.found()).isFalse();
        assertThat(wrong.allowed()).isEqualTo(Set.of("DELETE", "GET"));
        assertThat(table.lookup("GET", "/nothing/here").allowed()).isEmpty();
        // an empty segment never fills a parameter; a trailing slash is a segment of its own
        assertThat(table.lookup("GET", "/sandboxes/").allowed()).isEmpty();
        assertThat(table.lookup("GET", "/sandboxes/abc/").allowed()).isEmpty();
        assertThat(table.lookup("GET", "/templates//builds/b/status").allowed()).isEmpty();
    }

    @Test
    void aMalformedEscapeInTheWinningRouteIsA400() {
        assertThatThrownBy(() -> table.lookup("DELETE", "/templates/bad%zz"))
                .isInstanceOf(ApiException.class).satisfies(e -> assertThat(((ApiException) e).status()).isEqualTo(400));
        // not decoded when no route fits the method
        assertThat(table.lookup("POST", "/templates/bad%zz").allowed()).containsExactly("DELETE");
    }

    @Test
    void aRouteCannotBeAddedTwice() {
        assertThatThrownBy(() -> RouteTable.<String>builder().add("GET", "/a/{x}", "1").add("GET", "/a/{x}", "2"))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
