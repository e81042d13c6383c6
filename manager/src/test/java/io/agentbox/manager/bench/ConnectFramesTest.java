package io.agentbox.manager.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ConnectFramesTest {
    private static byte[] stream(Object... frames) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < frames.length; i += 2) {
            byte[] p = ((String) frames[i + 1]).getBytes(StandardCharsets.UTF_8);
            out.write((Integer) frames[i]);
            out.writeBytes(ByteBuffer.allocate(4).putInt(p.length).array());
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    @Test
    void readsTheExitCodeOfTheEndEvent() {
        byte[] s = stream(0, "{\"event\":{\"start\":{\"pid\":7}}}", 0, "{\"event\":{\"data\":{\"stdout\":\"aGkK\"}}}",
                0, "{\"event\":{\"end\":{\"exitCode\":3,\"exited\":true}}}", 2, "{}");
        assertThat(ConnectFrames.exitCode(ByteBuffer.wrap(s), "sb")).isEqualTo(3);
        assertThat(ConnectFrames.exitCode(ByteBuffer.wrap(stream(0, "{\"event\":{\"end\":{\"exited\":true}}}", 2, "{}")), "sb"))
                .isZero(); // proto3 JSON omits a zero exit code
    }

    @Test
    void refusesErrorsMissingEndsAndCutStreams() {
        assertThatThrownBy(() -> ConnectFrames.exitCode(ByteBuffer.wrap(stream(2,
                "{\"error\":{\"code\":\"unavailable\",\"message\":\"gone\"}}")), "sb"))
                .isInstanceOf(BenchException.class).hasMessageContaining("unavailable");
        assertThatThrownBy(() -> ConnectFrames.exitCode(ByteBuffer.wrap(stream(0, "{\"event\":{\"start\":{\"pid\":7}}}", 2, "{}")), "sb"))
                .hasMessageContaining("without an end event");
        byte[] cut = stream(0, "{\"event\":{\"end\":{\"exitCode\":0}}}");
        assertThatThrownBy(() -> ConnectFrames.exitCode(ByteBuffer.wrap(cut), "sb")).hasMessageContaining("cut short");
        byte[] lying = ByteBuffer.allocate(5).put((byte) 0).putInt(1 << 30).array();
        assertThatThrownBy(() -> ConnectFrames.exitCode(ByteBuffer.wrap(lying), "sb")).hasMessageContaining("cut short");
    }

    @Test
    void envelopeFramesOneMessage() {
        ByteBuffer b = ByteBuffer.wrap(ConnectFrames.envelope("{\"a\":1}"));
        assertThat(b.get()).isZero();
        assertThat(b.getInt()).isEqualTo(7);
        assertThat(StandardCharsets.UTF_8.decode(b).toString()).isEqualTo("{\"a\":1}");
    }
}
