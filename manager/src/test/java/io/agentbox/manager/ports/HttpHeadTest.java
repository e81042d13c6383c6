package io.agentbox.manager.ports;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class HttpHeadTest {
    static HttpHead parse(String s) {
        byte[] b = s.getBytes(StandardCharsets.ISO_8859_1);
        return HttpHead.parse(b, b.length);
    }

    @Test
    void parsesStatusFieldsAndKeepsTheBytesAfterTheHead() {
        HttpHead h = parse("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nX-A:  b c \r\n\r\nbody bytes");
        assertThat(h.status()).isEqualTo(200);
        assertThat(h.fields()).extracting(f -> f[0] + "=" + f[1]).containsExactly("Content-Type=text/plain", "X-A=b c");
        assertThat(new String(h.leftover(), StandardCharsets.ISO_8859_1)).isEqualTo("body bytes");
    }

    @Test
    void waitsForTheBlankLine() {
        assertThat(parse("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n")).isNull();
    }

    @Test
    void rejectsWhatIsNotAnHttp1Head() {
        assertThatThrownBy(() -> parse("SSH-2.0-OpenSSH\r\n\r\n")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> parse("HTTP/1.1 abc\r\n\r\n")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> parse("HTTP/1.1 200 OK\r\n folded\r\n\r\n")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void limitsTheHeadSize() {
        String big = "HTTP/1.1 200 OK\r\nX: " + "a".repeat(HttpHead.MAX_BYTES) + "\r\n";
        assertThatThrownBy(() -> parse(big)).hasMessageContaining("exceeds");
    }
}
