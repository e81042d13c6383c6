package io.agentbox.manager.cli.client;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * Reads a {@code text/event-stream} body (the WHATWG Server-Sent Events format): lines
 * {@code event: NAME} and {@code data: TEXT} (several data lines join with {@code \n}), an empty
 * line ends an event, lines starting with {@code :} are comments. {@code id} and {@code retry} are
 * ignored (the client never reconnects).
 */
public final class Sse {
    /** Largest event (all its lines), so a broken peer cannot grow the buffer without end. */
    public static final int MAX_EVENT_BYTES = 8 * 1024 * 1024;

    private Sse() {}

    /** One event: its {@code event} name ({@code message} when none was given) and data. */
    public record Event(String name, String data) {}

    /** Reads events until the stream ends; each goes to {@code onEvent} as soon as its empty line arrives. */
    public static void read(InputStream in, Consumer<Event> onEvent) throws IOException {
        String name = null;
        StringBuilder data = null;
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int eventBytes = 0;
        byte[] buf = new byte[8192];
        int n;
        boolean cr = false;
        while ((n = in.read(buf)) > 0) {
            for (int i = 0; i < n; i++) {
                byte b = buf[i];
                if (b == '\n' && cr) { // the \n of \r\n: the line ended at the \r
                    cr = false;
                    continue;
                }
                cr = b == '\r';
                if (b != '\n' && b != '\r') {
                    line.write(b);
                    if (++eventBytes > MAX_EVENT_BYTES) {
                        throw new IOException("server-sent event larger than " + MAX_EVENT_BYTES + " bytes");
                    }
                    continue;
                }
                String l = line.toString(StandardCharsets.UTF_8);
                line.reset();
                if (l.isEmpty()) {
                    if (data != null) {
                        onEvent.accept(new Event(name == null ? "message" : name, data.toString()));
                    }
                    name = null;
                    data = null;
                    eventBytes = 0;
                    continue;
                }
                if (l.startsWith(":")) {
                    continue;
                }
                int colon = l.indexOf(':');
                String field = colon < 0 ? l : l.substring(0, colon);
                String value = colon < 0 ? "" : l.substring(l.startsWith(" ", colon + 1) ? colon + 2 : colon + 1);
                if (field.equals("event")) {
                    name = value;
                } else if (field.equals("data")) {
                    data = data == null ? new StringBuilder(value) : data.append('\n').append(value);
                }
            }
        }
    }
}
