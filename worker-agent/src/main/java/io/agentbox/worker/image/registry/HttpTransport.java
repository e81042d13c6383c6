package io.agentbox.worker.image.registry;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.InputStreamResponseListener;
import org.eclipse.jetty.client.ProxyAuthenticationProtocolHandler;
import org.eclipse.jetty.client.RedirectProtocolHandler;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.WWWAuthenticationProtocolHandler;
import org.eclipse.jetty.http.HttpCookieStore;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * One HTTP exchange at a time on Jetty's HttpClient, with the client's own conveniences turned
 * off: no automatic redirects (we follow them by hand to drop credentials on another host), no
 * automatic authentication, no cookies, no {@code Accept-Encoding} (digests are over the bytes
 * the registry stores, so nothing may decode them on the way).
 */
final class HttpTransport implements AutoCloseable {
    static final String USER_AGENT = "agentbox-worker";

    private final HttpClient client;
    private final RegistryConfig.Timeouts timeouts;

    HttpTransport(RegistryConfig.Timeouts timeouts) {
        this.timeouts = timeouts;
        client = new HttpClient();
        QueuedThreadPool threads = new QueuedThreadPool(64, 2);
        threads.setName("registry-client");
        threads.setDaemon(true);
        client.setExecutor(threads);
        client.setFollowRedirects(false);
        client.setConnectTimeout(timeouts.connect().toMillis());
        client.setIdleTimeout(timeouts.idle().toMillis());
        client.setHttpCookieStore(new HttpCookieStore.Empty());
        client.setUserAgentField(new HttpField(HttpHeader.USER_AGENT, USER_AGENT));
        client.getContentDecoderFactories().clear();
        client.getProtocolHandlers().remove(WWWAuthenticationProtocolHandler.NAME);
        client.getProtocolHandlers().remove(ProxyAuthenticationProtocolHandler.NAME);
        client.getProtocolHandlers().remove(RedirectProtocolHandler.NAME);
        try {
            client.start();
        } catch (Exception e) {
            throw new IllegalStateException("cannot start the registry HTTP client", e);
        }
    }

    /**
     * Sends a request and waits for the response headers; the body is read from the returned
     * reply, which must be closed.
     *
     * @param streaming true for blobs: no limit on the whole exchange, only on silence
     *     ({@code timeouts.idle}); false: the whole exchange within {@code timeouts.request}
     * @throws ConnectFailure when no response arrived (refused, DNS, TLS, timeout)
     */
    Reply send(String method, URI uri, Map<String, String> headers, boolean streaming) throws IOException {
        Request req = client.newRequest(uri).method(method).idleTimeout(timeouts.idle().toMillis(), TimeUnit.MILLISECONDS);
        if (!streaming) {
            req.timeout(timeouts.request().toMillis(), TimeUnit.MILLISECONDS);
        }
        req.headers(h -> headers.forEach(h::put));
        InputStreamResponseListener listener = new InputStreamResponseListener();
        req.send(listener);
        Duration wait = timeouts.connect().plus(timeouts.request());
        Response response;
        try {
            response = listener.get(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            req.abort(e);
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for " + uri);
        } catch (TimeoutException e) {
            req.abort(e);
            throw new ConnectFailure("no answer within " + wait.toSeconds() + " s", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new ConnectFailure(describe(cause), cause);
        }
        return new Reply(uri, response, listener.getInputStream());
    }

    /** The innermost useful message of a connection failure ("Connection refused"). */
    static String describe(Throwable t) {
        Throwable c = t;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        String m = c.getMessage();
        if (m == null || m.isBlank()) {
            m = t.getMessage();
        }
        return m == null || m.isBlank() ? c.getClass().getSimpleName() : m;
    }

    @Override
    public void close() {
        try {
            client.stop();
        } catch (Exception e) {
            // stopping a client only releases sockets and threads; nothing to report to callers
        }
    }

    /** No HTTP response: the cause names what went wrong at the network level. */
    static final class ConnectFailure extends IOException {
        ConnectFailure(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** A response whose headers have arrived; the body streams from {@link #body()}. */
    static final class Reply implements AutoCloseable {
        private final URI uri;
        private final Response response;
        private final InputStream body;

        Reply(URI uri, Response response, InputStream body) {
            this.uri = uri;
            this.response = response;
            this.body = body;
        }

        URI uri() {
            return uri;
        }

        int status() {
            return response.getStatus();
        }

        String header(String name) {
            return response.getHeaders().get(name);
        }

        /** Content-Length, or -1 when absent or unreadable. */
        long contentLength() {
            try {
                return response.getHeaders().getLongField(HttpHeader.CONTENT_LENGTH);
            } catch (NumberFormatException e) {
                return -1;
            }
        }

        InputStream body() {
            return body;
        }

        /**
         * Reads the whole body, failing when it is longer than {@code max} bytes.
         *
         * @throws BodyTooLarge when the body (or its Content-Length) exceeds {@code max}
         */
        byte[] readAll(long max) throws IOException {
            long declared = contentLength();
            if (declared > max) {
                throw new BodyTooLarge(declared);
            }
            byte[] bytes = body.readNBytes((int) Math.min(max + 1, Integer.MAX_VALUE - 8));
            if (bytes.length > max) {
                throw new BodyTooLarge(-1);
            }
            return bytes;
        }

        @Override
        public void close() {
            try {
                body.close();
            } catch (IOException e) {
                // closing aborts an unread body; the connection is dropped either way
            }
        }
    }

    /** A body over the caller's limit; {@code declared} is its Content-Length or -1. */
    static final class BodyTooLarge extends IOException {
        final long declared;

        BodyTooLarge(long declared) {
            super(declared >= 0 ? "body of " + declared + " bytes" : "body too large");
            this.declared = declared;
        }
    }
}
