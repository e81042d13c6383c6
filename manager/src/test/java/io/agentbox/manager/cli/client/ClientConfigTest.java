package io.agentbox.manager.cli.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where the client finds the hub's URL and key: flag, then environment, then the config file. */
class ClientConfigTest {
    @TempDir
    Path home;

    private Map<String, String> env(String... pairs) {
        Map<String, String> env = new HashMap<>();
        env.put("HOME", home.toString());
        for (int i = 0; i < pairs.length; i += 2) {
            env.put(pairs[i], pairs[i + 1]);
        }
        return env;
    }

    @Test
    void aFlagBeatsTheEnvironmentWhichBeatsTheConfigFile() throws Exception {
        Path file = home.resolve(".config/agentbox/config.json");
        ClientConfig.set(file, "url", "http://file:1");
        ClientConfig.set(file, "api-key", "file-key");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");

        ClientConfig.Resolved r = ClientConfig.resolve(null, null, env()::get);
        assertThat(r.url()).isEqualTo(new ClientConfig.Value("http://file:1", "config file " + file));
        assertThat(r.apiKey().value()).isEqualTo("file-key");

        Map<String, String> e2b = env("E2B_API_URL", "http://e2b:2/", "E2B_API_KEY", "e2b-key");
        r = ClientConfig.resolve(null, null, e2b::get);
        assertThat(r.url()).as("the SDK's variables beat the file; a trailing slash goes")
                .isEqualTo(new ClientConfig.Value("http://e2b:2", "$E2B_API_URL"));
        assertThat(r.apiKey()).isEqualTo(new ClientConfig.Value("e2b-key", "$E2B_API_KEY"));

        Map<String, String> both = env("E2B_API_URL", "http://e2b:2", "E2B_API_KEY", "e2b-key",
                "AGENTBOX_URL", "http://ab:3", "AGENTBOX_API_KEY", "ab-key");
        r = ClientConfig.resolve(null, null, both::get);
        assertThat(r.url().value()).isEqualTo("http://ab:3");
        assertThat(r.apiKey().value()).isEqualTo("ab-key");

        r = ClientConfig.resolve("https://flag:4", "flag-key", both::get);
        assertThat(r.url()).isEqualTo(new ClientConfig.Value("https://flag:4", "--url"));
        assertThat(r.apiKey()).isEqualTo(new ClientConfig.Value("flag-key", "--api-key"));

        // each value on its own: a flag URL with the key from the file; blanks count as unset
        r = ClientConfig.resolve("http://flag:4", " ", env("AGENTBOX_API_KEY", "")::get);
        assertThat(r.url().value()).isEqualTo("http://flag:4");
        assertThat(r.apiKey().value()).isEqualTo("file-key");
        assertThat(r.require()).isEqualTo(new ClientConfig.Settings("http://flag:4", "file-key"));
    }

    @Test
    void theConfigFileIsFoundThroughAgentboxConfigThenXdgThenHome() throws Exception {
        Path explicit = home.resolve("elsewhere.json");
        Files.writeString(explicit, "{\"url\":\"http://explicit:1\"}");
        Path xdg = home.resolve("xdg");
        ClientConfig.set(xdg.resolve("agentbox/config.json"), "url", "http://xdg:1");
        assertThat(ClientConfig.resolve(null, null, env("AGENTBOX_CONFIG", explicit.toString(),
                "XDG_CONFIG_HOME", xdg.toString())::get).url().value()).isEqualTo("http://explicit:1");
        assertThat(ClientConfig.resolve(null, null, env("XDG_CONFIG_HOME", xdg.toString())::get).url().value())
                .isEqualTo("http://xdg:1");
        assertThat(ClientConfig.file(env()::get)).isEqualTo(home.resolve(".config/agentbox/config.json"));

        ClientConfig.set(explicit, "url", null);
        assertThat(ClientConfig.values(explicit)).isEmpty();
        assertThatThrownBy(() -> ClientConfig.set(explicit, "token", "x")).hasMessageContaining("unknown config key 'token'")
                .hasMessageContaining("url").hasMessageContaining("api-key");
    }

    @Test
    void whatIsMissingIsNamedWithEveryPlaceToGiveIt() throws Exception {
        ClientConfig.Resolved none = ClientConfig.resolve(null, null, env()::get);
        assertThatThrownBy(none::require).isInstanceOf(ClientException.class)
                .hasMessageContaining("no hub URL: pass --url, set AGENTBOX_URL (or E2B_API_URL)")
                .hasMessageContaining("agentbox config set url").hasMessageContaining(home.resolve(".config/agentbox/config.json").toString());
        assertThatThrownBy(() -> ClientConfig.resolve("http://x:1", null, env()::get).require())
                .hasMessageContaining("no API key: pass --api-key, set AGENTBOX_API_KEY (or E2B_API_KEY)");
        assertThatThrownBy(() -> ClientConfig.resolve("localhost:8080", "k", env()::get))
                .hasMessageContaining("must start with http:// or https://").hasMessageContaining("from --url");

        Path broken = home.resolve("broken.json");
        Files.writeString(broken, "[1]");
        assertThatThrownBy(() -> ClientConfig.resolve(null, null, env("AGENTBOX_CONFIG", broken.toString())::get))
                .hasMessageContaining("config file " + broken + " is not a JSON object");
        Files.writeString(broken, "{");
        assertThatThrownBy(() -> ClientConfig.resolve(null, null, env("AGENTBOX_CONFIG", broken.toString())::get))
                .hasMessageContaining("cannot read config file " + broken);
    }
}
