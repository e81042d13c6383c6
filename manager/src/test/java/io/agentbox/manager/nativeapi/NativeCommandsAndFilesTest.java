package io.agentbox.manager.nativeapi;

import static io.agentbox.manager.nativeapi.NativeSandboxesTest.assertEnvelope;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentbox.manager.http.Json;
import io.agentbox.manager.nativeapi.V1Client.Res;
import io.agentbox.manager.testing.ApiUnderTest;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** Commands (JSON, server-sent events, stdin, signals) and files of the native API on a real sandbox. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NativeCommandsAndFilesTest {
    ApiUnderTest api;
    V1Client v1;
    String key;
    String otherKey;
    String id;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        api = ApiUnderTest.start(dir);
        v1 = new V1Client(api.base);
        key = api.store.createApiKey("carol", "user");
        otherKey = api.store.createApiKey("dave", "user");
        Res r = v1.call("POST", "/v1/sandboxes", key, "{\"timeoutSeconds\":600}");
        assertThat(r.status()).as(r.text()).isEqualTo(201);
        id = r.json().get("id").asText();
    }

    @AfterAll
    void stop() throws Exception {
        api.close();
    }

    Res run(String body) throws Exception {
        return v1.call("POST", "/v1/sandboxes/" + id + "/commands", key, body);
    }

    @Test
    void aCommandIsRunAndWaitedFor() throws Exception {
        Res r = run("{\"cmd\":\"echo hi; echo oops >&2; echo $A; pwd; exit 3\",\"env\":{\"A\":\"from-env\"},\"cwd\":\"/tmp\"}");
        assertThat(r.status()).as(r.text()).isEqualTo(200);
        assertThat(r.json().get("exitCode").asInt()).isEqualTo(3);
        assertThat(r.json().get("stdout").asText()).isEqualTo("hi\nfrom-env\n/tmp\n");
        assertThat(r.json().get("stderr").asText()).isEqualTo("oops\n");
        assertThat(r.json().get("pid").asInt()).isPositive();
        assertThat(r.json().has("truncated")).isFalse();

        assertThat(run("{\"cmd\":\"id -u\",\"user\":\"root\"}").json().get("stdout").asText()).isEqualTo("0\n");
        assertThat(run("{\"cmd\":\"id -u\"}").json().get("stdout").asText()).isEqualTo("1000\n");
        Res big = run("{\"cmd\":\"head -c 1100000 /dev/zero | tr '\\\\0' x\"}");
        assertThat(big.json().get("stdout").asText()).hasSize(CommandEndpoints.MAX_OUTPUT);
        assertThat(big.json().get("truncated").asBoolean()).isTrue();
        Res killed = run("{\"cmd\":\"sleep 30\",\"timeoutSeconds\":1}");
        assertThat(killed.json().get("exitCode").asInt()).as(killed.text()).isNotZero();
        assertThat(killed.json().get("error").asText()).contains("kill");

        assertEnvelope(run("{}"), 400, "bad_request");
        assertEnvelope(run("{\"cmd\":\"true\",\"user\":\"mallory\"}"), 400, "bad_request");
        assertEnvelope(run("{\"cmd\":\"true\",\"timeoutSeconds\":-1}"), 400, "bad_request");
        assertEnvelope(v1.call("POST", "/v1/sandboxes/nope/commands", key, "{\"cmd\":\"true\"}"), 404, "not_found");
        assertEnvelope(v1.call("POST", "/v1/sandboxes/" + id + "/commands", otherKey, "{\"cmd\":\"true\"}"), 404, "not_found");
    }

    /** One SSE event as read, with the time it arrived. */
    record Event(String name, JsonNode data, long atNanos) {}

    /** Starts {@code body} as an SSE command; events land in the queue as they arrive (a null name: the stream ended). */
    BlockingQueue<Event> stream(String body) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(api.base + "/v1/sandboxes/" + id + "/commands"))
                .header("Authorization", "Bearer " + key).header("Accept", "text/event-stream")
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
        HttpResponse<InputStream> r = v1.http().send(req, HttpResponse.BodyHandlers.ofInputStream());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("text/event-stream");
        BlockingQueue<Event> events = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
                String name = null;
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.startsWith("event: ")) {
                        name = line.substring(7);
                    } else if (line.startsWith("data: ")) {
                        events.add(new Event(name, Json.MAPPER.readTree(line.substring(6)), System.nanoTime()));
                    }
                }
            } catch (Exception e) {
                // the stream broke: the end marker below tells the test
            }
            events.add(new Event(null, null, System.nanoTime()));
        });
        reader.setDaemon(true);
        reader.start();
        return events;
    }

    static Event next(BlockingQueue<Event> events) throws InterruptedException {
        Event e = events.poll(20, TimeUnit.SECONDS);
        assertThat(e).as("an event within 20 s").isNotNull();
        return e;
    }

    @Test
    void outputStreamsAsServerSentEventsWhileTheCommandRuns() throws Exception {
        long sent = System.nanoTime();
        BlockingQueue<Event> events = stream("{\"cmd\":\"echo a; sleep 2; echo b >&2; exit 4\"}");
        Event start = next(events);
        assertThat(start.name()).isEqualTo("start");
        assertThat(start.data().get("pid").asInt()).isPositive();
        Event a = next(events);
        assertThat(a.name()).isEqualTo("stdout");
        assertThat(a.data().get("data").asText()).isEqualTo("a\n");
        Event b = next(events);
        assertThat(b.name()).isEqualTo("stderr");
        assertThat(b.data().get("data").asText()).isEqualTo("b\n");
        Event end = next(events);
        assertThat(end.name()).isEqualTo("end");
        assertThat(end.data().get("exitCode").asInt()).isEqualTo(4);
        assertThat(next(events).name()).as("the stream ends after 'end'").isNull();
        // the first output arrived while the command still slept, well before its end
        assertThat(TimeUnit.NANOSECONDS.toMillis(a.atNanos() - sent)).isLessThan(1500);
        assertThat(TimeUnit.NANOSECONDS.toMillis(end.atNanos() - a.atNanos())).isGreaterThanOrEqualTo(1800);
    }

    @Test
    void stdinFeedsARunningCommandAndSignalsStopIt() throws Exception {
        BlockingQueue<Event> events = stream("{\"cmd\":\"cat\",\"stdin\":true,\"tag\":\"cat-1\",\"timeoutSeconds\":60}");
        int pid = next(events).data().get("pid").asInt();
        String base = "/v1/sandboxes/" + id + "/commands/" + pid;

        Res listed = v1.call("GET", "/v1/sandboxes/" + id + "/commands", key, null);
        assertThat(listed.status()).isEqualTo(200);
        assertThat(listed.json().get("items")).anySatisfy(p -> {
            assertThat(p.get("pid").asInt()).isEqualTo(pid);
            assertThat(p.get("cmd").asText()).isEqualTo("cat");
            assertThat(p.get("tag").asText()).isEqualTo("cat-1");
        });

        assertThat(v1.call("POST", base + "/stdin", key, "{\"data\":\"hello\\n\"}").status()).isEqualTo(204);
        Event echoed = next(events);
        assertThat(echoed.name()).isEqualTo("stdout");
        assertThat(echoed.data().get("data").asText()).isEqualTo("hello\n");
        assertThat(v1.call("POST", base + "/stdin", key, "{\"dataBase64\":\"" + java.util.Base64.getEncoder()
                .encodeToString("bytes\n".getBytes(StandardCharsets.UTF_8)) + "\"}").status()).isEqualTo(204);
        assertThat(next(events).data().get("data").asText()).isEqualTo("bytes\n");

        assertEnvelope(v1.call("POST", base + "/signal", key, "{\"signal\":\"SIGHUP\"}"), 400, "bad_request");
        assertEnvelope(v1.call("POST", base + "/stdin", key, "{}"), 400, "bad_request");
        assertThat(v1.call("POST", base + "/signal", key, "{\"signal\":\"SIGKILL\"}").status()).isEqualTo(204);
        Event end = next(events);
        assertThat(end.name()).isEqualTo("end");
        assertThat(end.data().get("error").asText()).contains("killed");
        assertEnvelope(v1.call("POST", base + "/signal", key, "{\"signal\":\"SIGKILL\"}"), 404, "not_found");
        assertEnvelope(v1.call("POST", "/v1/sandboxes/" + id + "/commands/999999/stdin", key, "{\"data\":\"x\"}"), 404,
                "not_found");

        // eof closes stdin: cat ends by itself
        BlockingQueue<Event> second = stream("{\"cmd\":\"cat; echo done\",\"stdin\":true}");
        int pid2 = next(second).data().get("pid").asInt();
        assertThat(v1.call("POST", "/v1/sandboxes/" + id + "/commands/" + pid2 + "/stdin", key,
                "{\"data\":\"last\\n\",\"eof\":true}").status()).isEqualTo(204);
        StringBuilder out = new StringBuilder();
        Event e;
        while (!(e = next(second)).name().equals("end")) {
            out.append(e.data().get("data").asText());
        }
        assertThat(out.toString()).isEqualTo("last\ndone\n");
        assertThat(e.data().get("exitCode").asInt()).isZero();
    }

    @Test
    void filesAreWrittenReadListedStattedAndRemoved() throws Exception {
        String files = "/v1/sandboxes/" + id + "/files";
        byte[] content = new byte[70_000]; // over one 64 KiB chunk, with bytes that are not UTF-8
        for (int i = 0; i < content.length; i++) {
            content[i] = (byte) (i * 31);
        }
        HttpRequest put = HttpRequest.newBuilder(URI.create(api.base + files + "?path=notes/data.bin"))
                .header("Authorization", "Bearer " + key).PUT(HttpRequest.BodyPublishers.ofByteArray(content)).build();
        Res written = v1.send(put);
        assertThat(written.status()).as(written.text()).isEqualTo(201);
        assertThat(written.json().get("path").asText()).isEqualTo("/home/user/notes/data.bin");
        assertThat(written.json().get("type").asText()).isEqualTo("file");
        assertThat(written.json().get("size").asLong()).isEqualTo(content.length);

        HttpResponse<byte[]> read = v1.http().send(HttpRequest.newBuilder(URI.create(api.base + files
                + "?path=/home/user/notes/data.bin")).header("Authorization", "Bearer " + key).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(read.statusCode()).isEqualTo(200);
        assertThat(read.headers().firstValue("Content-Type")).hasValue("application/octet-stream");
        assertThat(read.body()).isEqualTo(content);

        Res stat = v1.call("GET", files + "/stat?path=notes", key, null);
        assertThat(stat.json().get("type").asText()).isEqualTo("dir");
        assertThat(stat.json().get("owner").asText()).isEqualTo("user");
        assertThat(stat.json().get("modifiedAt").asText()).endsWith("Z");
        Res list = v1.call("GET", files + "/list?path=notes", key, null);
        assertThat(list.json().get("items")).extracting(n -> n.get("name").asText()).containsExactly("data.bin");

        assertThat(v1.call("POST", files + "/mkdir", key, "{\"path\":\"notes/sub\"}").status()).isEqualTo(201);
        assertEnvelope(v1.call("POST", files + "/mkdir", key, "{\"path\":\"notes/sub\"}"), 409, "conflict");
        assertThat(v1.call("GET", files + "/list?path=notes&depth=2", key, null).json().get("items")).hasSize(2);

        // multipart upload of two files into a directory
        String boundary = "----agentbox-test";
        String body = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"one.txt\"\r\n"
                + "Content-Type: text/plain\r\n\r\nfirst\r\n--" + boundary
                + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"two.txt\"\r\n\r\nsecond\r\n--" + boundary + "--\r\n";
        Res uploaded = v1.send(HttpRequest.newBuilder(URI.create(api.base + files + "?path=/tmp/up"))
                .header("Authorization", "Bearer " + key).header("Content-Type", "multipart/form-data; boundary=" + boundary)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build());
        assertThat(uploaded.status()).as(uploaded.text()).isEqualTo(201);
        assertThat(uploaded.json()).extracting(n -> n.get("path").asText()).containsExactly("/tmp/up/one.txt", "/tmp/up/two.txt");
        assertThat(run("{\"cmd\":\"cat /tmp/up/one.txt /tmp/up/two.txt\"}").json().get("stdout").asText())
                .isEqualTo("firstsecond");

        assertThat(v1.call("DELETE", files + "?path=notes", key, null).status()).isEqualTo(204);
        assertEnvelope(v1.call("GET", files + "/stat?path=notes", key, null), 404, "not_found");
        assertEnvelope(v1.call("GET", files + "?path=/no/such/file", key, null), 404, "not_found");
        assertEnvelope(v1.call("GET", files, key, null), 400, "bad_request");
        assertEnvelope(v1.call("GET", files + "/list?path=/root", key, null), 403, "forbidden");
        assertEnvelope(v1.call("POST", files + "?path=/tmp", key, "{}"), 415, "unsupported_media_type");
        assertEnvelope(v1.call("GET", files + "/stat?path=/tmp", otherKey, null), 404, "not_found");
        assertThat(v1.call("GET", files + "/list?path=/root&user=root", key, null).status()).isEqualTo(200);
    }
}
