package io.agentbox.manager.nativeapi;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.http.Json;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** A test reader of a server-sent-events response: every event as {@code {event, data}}, read on its own thread. */
final class SseClient implements AutoCloseable {
    final HttpResponse<InputStream> response;
    private final BlockingQueue<JsonNode> events = new LinkedBlockingQueue<>();
    private final Thread reader;
    volatile boolean ended;

    private SseClient(HttpResponse<InputStream> response) {
        this.response = response;
        this.reader = new Thread(this::read, "sse-client");
        reader.setDaemon(true);
        reader.start();
    }

    /** Opens {@code GET path} with {@code key}; the status may be anything (check {@link #response}). */
    static SseClient open(HttpClient http, String base, String path, String key) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).header("Accept", "text/event-stream").GET();
        if (key != null) {
            b.header("Authorization", "Bearer " + key);
        }
        return new SseClient(http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream()));
    }

    private void read() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            String event = null;
            String line;
            while ((line = in.readLine()) != null) {
                if (line.startsWith("event: ")) {
                    event = line.substring(7);
                } else if (line.startsWith("data: ") && event != null) {
                    events.add(Json.MAPPER.createObjectNode().put("event", event).set("data", Json.MAPPER.readTree(line.substring(6))));
                    event = null;
                }
            }
        } catch (Exception e) {
            // closed
        } finally {
            ended = true;
        }
    }

    /** The next event {@code match} takes (skipping others) within {@code within}; null when none came. */
    JsonNode next(Predicate<JsonNode> match, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            JsonNode e = left <= 0 ? null : events.poll(left, TimeUnit.NANOSECONDS);
            if (e == null || match.test(e)) {
                return e;
            }
        }
    }

    /** The events received and not taken yet. */
    java.util.List<JsonNode> drain() {
        java.util.List<JsonNode> out = new java.util.ArrayList<>();
        events.drainTo(out);
        return out;
    }

    @Override
    public void close() throws Exception {
        response.body().close();
    }
}
