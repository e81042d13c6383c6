package io.agentbox.manager.cli.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Tables for people, the API's JSON for programs; progress as plain lines off a terminal; exec's and cp's argument forms. */
class OutputTest {
    @Test
    void aTableAlignsColumnsAndJsonIsTheItems() throws Exception {
        List<JsonNode> items = List.of(ApiClient.MAPPER.readTree("{\"id\":\"a\",\"tags\":[\"x\",\"y\"],\"meta\":{\"k\":\"v\"}}"),
                ApiClient.MAPPER.readTree("{\"id\":\"longer-id\",\"tags\":[]}"));
        List<Output.Column> cols = List.of(Output.Column.of("ID", "id"), Output.Column.of("TAGS", "tags"),
                Output.Column.of("META", "meta"));
        StringWriter table = new StringWriter();
        new Output(new PrintWriter(table), Output.Format.table).list(items, cols);
        assertThat(table.toString()).isEqualTo("ID         TAGS  META\na          x,y   k=v\nlonger-id  -     -\n");

        StringWriter json = new StringWriter();
        new Output(new PrintWriter(json), Output.Format.json).list(items, cols);
        JsonNode back = ApiClient.MAPPER.readTree(json.toString());
        assertThat(back.isArray()).isTrue();
        assertThat(back.get(0)).isEqualTo(items.get(0));
    }

    @Test
    void progressOffATerminalIsALinePerTenth() {
        StringWriter err = new StringWriter();
        try (Progress p = new Progress(new PrintWriter(err), false, "pulling x")) {
            for (int i = 0; i <= 100; i++) {
                p.update(i, 100, i + "/100 MB");
            }
        }
        assertThat(err.toString().lines()).hasSize(11).startsWith("pulling x: 0/100 MB").endsWith("pulling x: 100/100 MB");

        StringWriter tty = new StringWriter();
        try (Progress p = new Progress(new PrintWriter(tty), true, "pulling x")) {
            p.update(50, 100, "half");
        }
        assertThat(tty.toString()).isEqualTo("\rpulling x [" + "#".repeat(15) + " ".repeat(15) + "]  50% half\n");
    }

    @Test
    void execQuotesSeveralArgumentsAndKeepsOneAsACommandLine() {
        assertThat(ExecCommand.commandLine(List.of("echo $HOME | wc -c"))).isEqualTo("echo $HOME | wc -c");
        assertThat(ExecCommand.commandLine(List.of("echo", "$HOME", "it's", "a/b.c"))).isEqualTo("echo '$HOME' 'it'\\''s' a/b.c");
    }

    @Test
    void cpTellsTheSandboxSideFromALocalPath() {
        assertThat(CpCommand.remote("sbx-1:/tmp/f")).isEqualTo(new CpCommand.Remote("sbx-1", "/tmp/f"));
        assertThat(CpCommand.remote("sbx-1:")).isEqualTo(new CpCommand.Remote("sbx-1", ""));
        assertThat(CpCommand.remote("./a:b")).isNull();
        assertThat(CpCommand.remote("/tmp/f")).isNull();
        assertThat(CpCommand.remote("Upper:/x")).isNull();
    }
}
