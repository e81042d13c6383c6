package io.agentbox.manager.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.manager.http.HttpServers;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The console's static files over a real Jetty server configured like the public port (encoded
 * slashes allowed), with requests written byte for byte on a socket so that no client normalizes
 * a {@code ..} or an escape away: content types, caching, the security headers, redirects, 304s,
 * and every way out of the folder refused.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConsoleHandlerTest {
    Server server;
    int port;

    @BeforeAll
    void start() throws Exception {
        ConsoleHandler console = new ConsoleHandler();
        server = HttpServers.create("console-test", 8, 2, "127.0.0.1", 0, 10_000);
        HttpServers.allowEncodedSlash(server);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                if (!ConsoleHandler.isConsoleRequest(request)) {
                    return false;
                }
                console.handle(request, response, callback);
                return true;
            }
        });
        server.start();
        port = HttpServers.port(server);
    }

    @AfterAll
    void stop() throws Exception {
        server.stop();
    }

    record Answer(int status, Map<String, String> headers, byte[] body) {
        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    Answer send(String method, String target, String... extraHeaders) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            StringBuilder req = new StringBuilder(method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
            for (String h : extraHeaders) {
                req.append(h).append("\r\n");
            }
            OutputStream out = socket.getOutputStream();
            out.write(req.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] all = in.readAllBytes();
            String raw = new String(all, StandardCharsets.ISO_8859_1);
            int end = raw.indexOf("\r\n\r\n");
            String[] lines = raw.substring(0, end).split("\r\n");
            Map<String, String> headers = new LinkedHashMap<>();
            for (int i = 1; i < lines.length; i++) {
                int colon = lines[i].indexOf(':');
                headers.put(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).trim());
            }
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            body.write(all, end + 4, all.length - end - 4);
            return new Answer(Integer.parseInt(lines[0].split(" ")[1]), headers, body.toByteArray());
        }
    }

    @Test
    void theIndexIsServedAsHtmlWithTheSecurityHeaders() throws IOException {
        Answer a = send("GET", "/console/");
        assertThat(a.status()).isEqualTo(200);
        assertThat(a.header("Content-Type")).isEqualTo("text/html; charset=utf-8");
        assertThat(a.text()).contains("<script type=\"module\" src=\"js/app.js\"></script>");
        assertThat(a.header("Content-Security-Policy")).isEqualTo(ConsoleHandler.CSP).contains("script-src 'self'");
        assertThat(a.header("X-Content-Type-Options")).isEqualTo("nosniff");
        assertThat(a.header("X-Frame-Options")).isEqualTo("DENY");
        assertThat(a.header("Referrer-Policy")).isEqualTo("no-referrer");
        assertThat(a.header("Cache-Control")).isEqualTo("no-cache");
        assertThat(a.header("ETag")).matches("\"[0-9a-f]{24}\"");
        assertThat(a.header("Content-Length")).isEqualTo(String.valueOf(a.body().length));
    }

    @Test
    void theBarePrefixRedirectsToTheFolder() throws IOException {
        Answer a = send("GET", "/console");
        assertThat(a.status()).isEqualTo(301);
        assertThat(a.header("Location")).endsWith("/console/");
    }

    @Test
    void scriptsStylesAndTheXtermWebJarHaveTheirContentTypes() throws IOException {
        Answer js = send("GET", "/console/js/app.js");
        assertThat(js.status()).isEqualTo(200);
        assertThat(js.header("Content-Type")).isEqualTo("text/javascript; charset=utf-8");
        assertThat(send("GET", "/console/app.css").header("Content-Type")).isEqualTo("text/css; charset=utf-8");

        Answer xterm = send("GET", "/console/vendor/xterm.js");
        assertThat(xterm.status()).isEqualTo(200);
        assertThat(xterm.header("Content-Type")).isEqualTo("text/javascript; charset=utf-8");
        assertThat(xterm.text()).contains("Terminal");
        assertThat(send("GET", "/console/vendor/xterm.css").text()).contains(".xterm");
        assertThat(send("GET", "/console/vendor/xterm-addon-fit.js").text()).contains("FitAddon");
    }

    @Test
    void aMatchingEtagIsAnsweredWith304AndHeadHasNoBody() throws IOException {
        String etag = send("GET", "/console/app.css").header("ETag");
        Answer again = send("GET", "/console/app.css", "If-None-Match: " + etag);
        assertThat(again.status()).isEqualTo(304);
        assertThat(again.body()).isEmpty();
        assertThat(send("GET", "/console/app.css", "If-None-Match: \"other\"").status()).isEqualTo(200);

        Answer head = send("HEAD", "/console/app.css");
        assertThat(head.status()).isEqualTo(200);
        assertThat(head.body()).isEmpty();
        assertThat(Integer.parseInt(head.header("Content-Length"))).isPositive();
    }

    @Test
    void otherMethodsAre405WithAllow() throws IOException {
        Answer a = send("POST", "/console/index.html", "Content-Length: 0");
        assertThat(a.status()).isEqualTo(405);
        assertThat(a.header("Allow")).isEqualTo("GET, HEAD");
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "/console/js", "/console/js/", "/console/pages", "/console/nope.js", "/console/.hidden.css",
        "/console/../logback.xml", "/console/js/../../logback.xml", "/console/%2e%2e/logback.xml",
        "/console/..%2flogback.xml", "/console/js%2f..%2f..%2flogback.xml", "/console/db/migration",
        "/console/vendor/package.json", "/console/vendor/xterm/4.9.0/lib/xterm.js", "/console/vendor/../index.html",
        "/console/index.html%00.css", "/console/js\\app.js", "/console/index.xml", "/console/README"})
    void pathsOutsideTheConsoleFilesAreNotFoundAndNeverListed(String target) throws IOException {
        Answer a = send("GET", target);
        // Jetty itself refuses some ambiguous paths with 400 before a handler sees them
        assertThat(a.status()).as(target).isIn(400, 404);
        assertThat(a.text()).doesNotContain("<configuration", "app.js", "\"name\"");
    }

    @Test
    void findRefusesNamesOutsideTheFolder() {
        ConsoleHandler console = new ConsoleHandler();
        assertThat(console.find("index.html")).isNotNull();
        assertThat(console.find("js")).isNull();
        assertThat(console.find("../logback.xml")).isNull();
        assertThat(console.find("js/../index.html")).isNull();
        assertThat(console.find(".x.css")).isNull();
        assertThat(console.find("vendor/xterm.js").bytes().length).isGreaterThan(100_000);
    }
}
