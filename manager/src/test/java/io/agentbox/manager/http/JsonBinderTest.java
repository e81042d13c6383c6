package io.agentbox.manager.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonBinderTest {
    record Alias(String ip, List<String> hostnames) {}

    record Body(String name, Integer count, Long big, Double rate, Boolean on, List<Alias> aliases, Map<String, String> tags) {}

    @JsonIgnoreProperties(ignoreUnknown = true)
    record Lenient(String name) {}

    record Checked(String name) {
        Checked {
            if ("bad".equals(name)) {
                throw ApiException.e2b(400, "name may not be bad");
            }
        }
    }

    static <T> T plain(String json, Class<T> type) {
        return JsonBinder.PLAIN.bind(Json.parseObject(json.getBytes(StandardCharsets.UTF_8)), type);
    }

    @Test
    void bindsValuesAsTheyAreAndNullAsAbsent() {
        Body b = plain("{\"name\":\"n\",\"count\":3,\"big\":5000000000,\"rate\":1,\"on\":false,"
                + "\"aliases\":[{\"ip\":\"10.0.0.1\",\"hostnames\":[\"a\"]}],\"tags\":{\"k\":\"v\"}}", Body.class);
        assertThat(b).isEqualTo(new Body("n", 3, 5_000_000_000L, 1.0, false, List.of(new Alias("10.0.0.1", List.of("a"))),
                Map.of("k", "v")));
        assertThat(plain("{\"name\":null}", Body.class).name()).isNull();
        assertThat(plain("{}", Body.class)).isEqualTo(new Body(null, null, null, null, null, null, null));
    }

    @Test
    void refusesEveryCoercionNamingTheField() {
        String[][] cases = {
                {"{\"name\":7}", "name must be a string"},
                {"{\"name\":true}", "name must be a string"},
                {"{\"name\":{}}", "name must be a string"},
                {"{\"count\":\"5\"}", "count must be an integer"},
                {"{\"count\":5.0}", "count must be an integer"},
                {"{\"count\":5.5}", "count must be an integer"},
                {"{\"count\":true}", "count must be an integer"},
                {"{\"count\":3000000000}", "count is invalid"},
                {"{\"rate\":\"1.5\"}", "rate must be a number"},
                {"{\"on\":1}", "on must be true or false"},
                {"{\"on\":\"true\"}", "on must be true or false"},
                {"{\"aliases\":{}}", "aliases must be an array"},
                {"{\"aliases\":[\"x\"]}", "aliases[0] must be an object"},
                {"{\"aliases\":[{\"ip\":1}]}", "aliases[0].ip must be a string"},
                {"{\"aliases\":[{\"ip\":\"a\",\"hostnames\":[2]}]}", "aliases[0].hostnames[0] must be a string"},
                {"{\"tags\":{\"k\":1}}", "tags.k must be a string"},
                {"{\"tags\":[]}", "tags must be an object"},
        };
        for (String[] c : cases) {
            assertThatThrownBy(() -> plain(c[0], Body.class)).as(c[0]).isInstanceOf(ApiException.class)
                    .hasMessageContaining(c[1]).satisfies(e -> assertThat(((ApiException) e).status()).isEqualTo(400));
        }
        assertThatThrownBy(() -> JsonBinder.QUOTED.bind(Json.parseObject("{\"on\":1}".getBytes(StandardCharsets.UTF_8)), Body.class))
                .hasMessageContaining("field 'on' must be true or false");
    }

    @Test
    void refusesUnknownFieldsUnlessTheRecordIgnoresThem() {
        assertThatThrownBy(() -> plain("{\"nmae\":\"x\"}", Body.class))
                .hasMessageContaining("unknown field 'nmae'; expected some of [aliases, big, count, name, on, rate, tags]");
        assertThatThrownBy(() -> plain("{\"aliases\":[{\"ip\":\"a\",\"host\":[]}]}", Body.class))
                .hasMessageContaining("unknown field 'host' in aliases[0]; expected some of [hostnames, ip]");
        assertThat(plain("{\"name\":\"x\",\"secure\":true,\"mcp\":{}}", Lenient.class).name()).isEqualTo("x");
    }

    @Test
    void aRecordsOwnCheckReachesTheCallerAsThrown() {
        assertThatThrownBy(() -> plain("{\"name\":\"bad\"}", Checked.class)).hasMessage("name may not be bad");
    }

    @Test
    void bindsOneFieldOfABody() {
        var body = Json.parseObject("{\"timeout\":30,\"other\":\"x\"}".getBytes(StandardCharsets.UTF_8));
        assertThat(JsonBinder.QUOTED.field(body, "timeout", Long.class)).isEqualTo(30L);
        assertThat(JsonBinder.QUOTED.field(body, "missing", Long.class)).isNull();
        assertThatThrownBy(() -> JsonBinder.QUOTED.field(body, "other", Long.class))
                .hasMessageContaining("field 'other' must be an integer");
    }
}
