package io.agentbox.manager.cli.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The event-stream reader against the format's corner cases. */
class SseTest {
    private static List<Sse.Event> read(String text) throws Exception {
        List<Sse.Event> events = new ArrayList<>();
        Sse.read(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)), events::add);
        return events;
    }

    @Test
    void namedEventsCommentsMultiLineDataAndLineEndings() throws Exception {
        assertThat(read(": keep-alive\n\nevent: start\ndata: {\"pid\":7}\n\nevent:stdout\r\ndata: a\r\ndata: b\r\n\r\n"
                + "data: unnamed\rid: 3\r\rdata: cut off without an empty line"))
                .containsExactly(new Sse.Event("start", "{\"pid\":7}"), new Sse.Event("stdout", "a\nb"),
                        new Sse.Event("message", "unnamed"));
        assertThat(read("event: end\ndata\n\n")).containsExactly(new Sse.Event("end", ""));
        assertThat(read("data: ünïcode ✓\n\n")).containsExactly(new Sse.Event("message", "ünïcode ✓"));
    }

    @Test
    void anEventPastTheCapIsRefused() {
        String big = "data: " + "x".repeat(Sse.MAX_EVENT_BYTES) + "\n\n";
        assertThatThrownBy(() -> read(big)).hasMessageContaining("larger than " + Sse.MAX_EVENT_BYTES);
    }
}
